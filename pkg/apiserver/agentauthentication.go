package apiserver

import (
	"crypto/x509"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/kubernetes/plugin/pkg/auth/authenticator/token/bootstrap"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// agentAuthenticator authenticates the client certificates of federation
// agents, signed by the agents CA (--agent-client-ca-file), which is not
// the federation's main client CA: a certificate of it is only ever an
// agent, whatever it says. Its common name must be
// system:federation:agent:CLUSTER with a valid cluster name; its groups
// are exactly [system:federation:agents], whatever its organizations say,
// so that a leaked agents CA key cannot mint an admin (system:masters) or
// any other identity. The TLS handshake accepts the agents CA besides the
// main one.
func agentAuthenticator(caFile string, config *genericapiserver.Config) (authenticator.Request, error) {
	ca, err := dynamiccertificates.NewDynamicCAContentFromFile("agent-client-ca", caFile)
	if err != nil {
		return nil, fmt.Errorf("loading the agents' client CA file %s: %w", caFile, err)
	}
	if err := config.Authentication.ApplyClientCert(ca, config.SecureServing); err != nil {
		return nil, fmt.Errorf("requesting client certificates signed by %s: %w", caFile, err)
	}
	return x509request.NewDynamic(ca.VerifyOptions, x509request.UserConversionFunc(agentUser)), nil
}

// agentUser is the user of a verified agent certificate chain.
func agentUser(chain []*x509.Certificate) (*authenticator.Response, bool, error) {
	if len(chain) == 0 {
		return nil, false, nil
	}
	cn := chain[0].Subject.CommonName
	cluster, ok := federationv1beta1.AgentCluster(cn)
	if !ok {
		return nil, false, fmt.Errorf("a certificate of the agents CA must name an agent (%sCLUSTER), not %q", federationv1beta1.AgentUserPrefix, cn)
	}
	if msgs := validation.IsDNS1123Subdomain(cluster); len(msgs) > 0 {
		return nil, false, fmt.Errorf("agent certificate %q: %q is no cluster name: %s", cn, cluster, msgs[0])
	}
	return &authenticator.Response{User: &user.DefaultInfo{
		Name:   cn,
		Groups: []string{federationv1beta1.AgentGroup},
		// The tunnel takes only the certificates issued for the current
		// Cluster of that name (federationv1beta1.AgentCertificateBound).
		Extra: map[string][]string{federationv1beta1.AgentSerialExtra: {chain[0].SerialNumber.Text(16)}},
	}}, true, nil
}

// bootstrapTokenAuthenticator authenticates the bootstrap tokens kept as
// Secrets of type bootstrap.kubernetes.io/token in federation-system
// (kubefed token create), with Kubernetes' own bootstrap token
// authenticator: unknown, expired or deleted tokens are refused.
func bootstrapTokenAuthenticator(secrets corelisters.SecretNamespaceLister) authenticator.Request {
	return bearertoken.New(bootstrap.NewTokenAuthenticator(secrets))
}

// WatchBootstrapTokens lets the bootstrap tokens of federation-system
// authenticate (kubefed token create): it sets BootstrapTokens to a lister
// of that namespace's Secrets, watched through client (the loopback
// client) from the server's start on.
func (a *AuthenticationConfig) WatchBootstrapTokens(config *genericapiserver.Config, client kubernetes.Interface) error {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(federationv1beta1.SystemNamespace))
	a.BootstrapTokens = factory.Core().V1().Secrets().Lister().Secrets(federationv1beta1.SystemNamespace)
	if err := config.AddPostStartHook("start-bootstrap-token-informer", func(ctx genericapiserver.PostStartHookContext) error {
		factory.Start(ctx.Done())
		return nil
	}); err != nil {
		return fmt.Errorf("adding the bootstrap tokens' post-start hook: %w", err)
	}
	return nil
}
