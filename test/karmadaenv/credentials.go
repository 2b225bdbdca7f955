package karmadaenv

import (
	"os"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/federation-v1/federation/pkg/pki"
)

// Files of the plane's folder.
const (
	caCert             = "pki/ca.crt"
	caKey              = "pki/ca.key"
	frontProxyCACert   = "pki/front-proxy-ca.crt"
	frontProxyCAKey    = "pki/front-proxy-ca.key"
	frontProxyCert     = "pki/front-proxy-client.crt"
	frontProxyKey      = "pki/front-proxy-client.key"
	apiserverCert      = "pki/apiserver.crt"
	apiserverKey       = "pki/apiserver.key"
	aggregatedCert     = "pki/aggregated-apiserver.crt"
	aggregatedKey      = "pki/aggregated-apiserver.key"
	webhookCertDir     = "pki/webhook"
	serviceAccountKey  = "pki/sa.key"
	adminKubeconfig    = "admin.kubeconfig"
	kubeconfigSuffix   = ".kubeconfig"
	aggregatedService  = "karmada-aggregated-apiserver"
	karmadaSystem      = "karmada-system"
	frontProxyUserName = "front-proxy-client"
)

// users of karmada-apiserver: a client certificate each, as Karmada's
// installation issues them (hack/deploy-karmada.sh): its programs in
// system:masters, kube-controller-manager as bootstrap RBAC expects.
var users = map[string]struct {
	user   string
	groups []string
}{
	"admin":               {"system:admin", []string{"system:masters"}},
	AggregatedAPIServer:   {"system:karmada:karmada-aggregated-apiserver", []string{"system:masters"}},
	ControllerManager:     {"system:karmada:karmada-controller-manager", []string{"system:masters"}},
	Scheduler:             {"system:karmada:karmada-scheduler", []string{"system:masters"}},
	Webhook:               {"system:karmada:karmada-webhook", []string{"system:masters"}},
	KubeControllerManager: {"system:kube-controller-manager", nil},
}

// writeCredentials issues the plane's certificates and writes a
// kubeconfig per user.
func (p *Plane) writeCredentials() error {
	if err := os.MkdirAll(p.path(webhookCertDir), 0o700); err != nil {
		return err
	}
	ca, err := pki.NewCA("karmada-ca")
	if err != nil {
		return err
	}
	if err := ca.WriteFiles(p.path(caCert), p.path(caKey)); err != nil {
		return err
	}
	if err := ca.IssueServing(p.path(apiserverCert), p.path(apiserverKey), "karmada-apiserver",
		"kubernetes", "kubernetes.default", "kubernetes.default.svc", "karmada-apiserver.karmada-system.svc"); err != nil {
		return err
	}
	// The aggregator checks the name <service>.<namespace>.svc.
	if err := ca.IssueServing(p.path(aggregatedCert), p.path(aggregatedKey), "karmada-aggregated-apiserver",
		aggregatedService+"."+karmadaSystem+".svc"); err != nil {
		return err
	}
	// karmada-webhook reads tls.crt and tls.key from its --cert-dir.
	if err := ca.IssueServing(p.path(webhookCertDir+"/tls.crt"), p.path(webhookCertDir+"/tls.key"), "karmada-webhook",
		"karmada-webhook.karmada-system.svc"); err != nil {
		return err
	}
	front, err := pki.NewCA("front-proxy-ca")
	if err != nil {
		return err
	}
	if err := front.WriteFiles(p.path(frontProxyCACert), p.path(frontProxyCAKey)); err != nil {
		return err
	}
	if err := front.IssueClient(p.path(frontProxyCert), p.path(frontProxyKey), frontProxyUserName); err != nil {
		return err
	}
	if err := pki.WriteServiceAccountKey(p.path(serviceAccountKey)); err != nil {
		return err
	}
	for name, u := range users {
		cert, key := p.path("pki/"+name+"-client.crt"), p.path("pki/"+name+"-client.key")
		if err := ca.IssueClient(cert, key, u.user, u.groups...); err != nil {
			return err
		}
		if err := p.writeKubeconfig(p.kubeconfig(name), ca.CertPEM(), cert, key); err != nil {
			return err
		}
	}
	p.caPEM = ca.CertPEM()
	return nil
}

func (p *Plane) writeKubeconfig(path string, caPEM []byte, cert, key string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["karmada-apiserver"] = &clientcmdapi.Cluster{Server: p.Server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos["karmada-apiserver"] = &clientcmdapi.AuthInfo{ClientCertificate: cert, ClientKey: key}
	cfg.Contexts["karmada-apiserver"] = &clientcmdapi.Context{Cluster: "karmada-apiserver", AuthInfo: "karmada-apiserver"}
	cfg.CurrentContext = "karmada-apiserver"
	return clientcmd.WriteToFile(*cfg, path)
}

// kubeconfig is the path of a user's kubeconfig.
func (p *Plane) kubeconfig(user string) string {
	if user == "admin" {
		return p.path(adminKubeconfig)
	}
	return p.path(user + kubeconfigSuffix)
}
