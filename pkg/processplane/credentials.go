package processplane

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/pki"
	"github.com/federation-v1/federation/pkg/serviceaccounttoken"
)

// Files of the plane's credentials, relative to its folder.
const (
	caCert          = "pki/ca.crt"
	caKey           = "pki/ca.key"
	servingCert     = "pki/apiserver.crt"
	servingKey      = "pki/apiserver.key"
	adminCert       = "pki/admin.crt"
	adminKey        = "pki/admin.key"
	controllersCert = "pki/controller-manager.crt"
	controllersKey  = "pki/controller-manager.key"
	// The agents CA signs federation agents' client certificates (the
	// controller manager's --agent-signing-*), which the apiserver trusts
	// for agents only (--agent-client-ca-file); never the main CA.
	agentsCACert = "pki/agents-ca.crt"
	agentsCAKey  = "pki/agents-ca.key"
	// serviceAccountKey signs and verifies the federation's own
	// service-account tokens (the apiserver's
	// --service-account-signing-key-file): one file for every apiserver
	// of the plane, so a token one issued authenticates at the other.
	serviceAccountKey = "pki/service-account.key"
	// ControllerManagerKubeconfig is how federation-controller-manager reaches the apiserver.
	ControllerManagerKubeconfig = "controller-manager.kubeconfig"
)

// Identities of the plane's clients: the person who ran init is an admin
// (system:masters may do everything); the controller manager has only its
// own ClusterRole, which the apiserver's bootstrap policy binds to its
// user name.
const (
	adminUser  = "admin"
	adminGroup = "system:masters"
)

// createCredentials writes a new CA, the apiserver's serving certificate and
// the client certificates of the admin and the controller manager; with DNS,
// also the embedded etcd's (createEtcdCredentials).
func (p *Plane) createCredentials() error {
	if err := os.MkdirAll(p.path("pki"), 0o700); err != nil {
		return err
	}
	ca, err := pki.NewCA("federation-" + p.Name + "-ca")
	if err != nil {
		return err
	}
	if err := ca.WriteFiles(p.path(caCert), p.path(caKey)); err != nil {
		return err
	}
	if err := ca.IssueServing(p.path(servingCert), p.path(servingKey), "federation-apiserver", p.AdvertiseAddress); err != nil {
		return err
	}
	if err := p.ensureServingChain(ca.CertPEM()); err != nil {
		return err
	}
	if err := p.createAgentsCA(); err != nil {
		return err
	}
	if err := p.ensureServiceAccountKey(); err != nil {
		return err
	}
	if err := ca.IssueClient(p.path(adminCert), p.path(adminKey), adminUser, adminGroup); err != nil {
		return err
	}
	if err := ca.IssueClient(p.path(controllersCert), p.path(controllersKey), federationv1beta1.ControllerManagerUser); err != nil {
		return err
	}
	return p.createEtcdCredentials()
}

// createAgentsCA writes the agents CA.
func (p *Plane) createAgentsCA() error {
	ca, err := pki.NewCA("federation-" + p.Name + "-agents-ca")
	if err != nil {
		return err
	}
	return ca.WriteFiles(p.path(agentsCACert), p.path(agentsCAKey))
}

// ensureServiceAccountKey writes the service-account signing key unless
// it exists: made at init, and at the start of a plane made before it.
func (p *Plane) ensureServiceAccountKey() error {
	_, err := serviceaccounttoken.EnsureSigningKey(p.path(serviceAccountKey))
	return err
}

// ensureServingChain makes the apiserver's serving certificate file hold
// its CA after the certificate, so that the apiserver presents the chain:
// a federation agent learns the CA from it, checked against the pin of
// kubefed token create (agentcredential.FetchCA).
func (p *Plane) ensureServingChain(caPEM []byte) error {
	chain, err := os.ReadFile(p.path(servingCert))
	if err != nil {
		return err
	}
	if bytes.Contains(chain, bytes.TrimSpace(caPEM)) {
		return nil
	}
	chain = append(bytes.TrimRight(chain, "\n"), '\n')
	return os.WriteFile(p.path(servingCert), append(chain, caPEM...), 0o600)
}

// ensureAgentCredentials gives a plane made before agents existed its
// agents CA, and a serving certificate file that holds the CA.
func (p *Plane) ensureAgentCredentials() error {
	if _, err := os.Stat(p.path(agentsCACert)); errors.Is(err, os.ErrNotExist) {
		if err := p.createAgentsCA(); err != nil {
			return fmt.Errorf("creating the agents CA: %w", err)
		}
	} else if err != nil {
		return err
	}
	ca, err := os.ReadFile(p.path(caCert))
	if err != nil {
		return err
	}
	return p.ensureServingChain(ca)
}

// writeControllerManagerKubeconfig writes how the controller manager reaches
// the apiserver.
func (p *Plane) writeControllerManagerKubeconfig() error {
	cfg, err := p.kubeconfig(controllersCert, controllersKey)
	if err != nil {
		return err
	}
	return clientcmd.WriteToFile(*cfg, p.path(ControllerManagerKubeconfig))
}

// AdminKubeconfig returns a kubeconfig whose cluster, user and context are
// all named after the federation, with the CA and admin credentials embedded.
func (p *Plane) AdminKubeconfig() (*clientcmdapi.Config, error) {
	return p.kubeconfig(adminCert, adminKey)
}

func (p *Plane) kubeconfig(certFile, keyFile string) (*clientcmdapi.Config, error) {
	ca, err := os.ReadFile(p.path(caCert))
	if err != nil {
		return nil, err
	}
	certPEM, err := os.ReadFile(p.path(certFile))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(p.path(keyFile))
	if err != nil {
		return nil, err
	}
	return pki.Kubeconfig(p.Name, p.Server, ca, certPEM, keyPEM), nil
}
