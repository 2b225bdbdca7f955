package apiserver

import (
	"fmt"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/federation-v1/federation/pkg/serviceaccounttoken"
)

// AuthenticationConfig says how clients prove who they are. A request with
// credentials that none of the configured methods accepts is rejected with
// 401; one without credentials is system:anonymous when Anonymous is set
// (the authorizer then lets it read only the public health and version
// paths), else rejected too.
type AuthenticationConfig struct {
	// ClientCAFile is a PEM bundle of the CAs that sign client certificates.
	// The certificate's common name is the user name, its organizations the
	// groups.
	ClientCAFile string
	// TokenAuthFile is a CSV file of bearer tokens: token,user,uid[,"group1,group2"].
	TokenAuthFile string
	// Anonymous lets requests without credentials in as system:anonymous,
	// as kube-apiserver's --anonymous-auth does.
	Anonymous bool
	// AgentClientCAFile is the PEM bundle of the agents CA, which signs
	// federation agents' client certificates only (agentAuthenticator).
	AgentClientCAFile string
	// BootstrapTokens, when set, lists the Secrets of federation-system,
	// whose bootstrap tokens then authenticate (kubefed token create).
	BootstrapTokens corelisters.SecretNamespaceLister
	// ServiceAccountTokens, when set, lets the federation's own
	// ServiceAccounts authenticate with the tokens it signed
	// (serviceaccounts/token, legacy token Secrets) as
	// system:serviceaccount:NS:NAME, in the groups system:serviceaccounts
	// and system:serviceaccounts:NS, so that the federation's RBAC applies
	// to them.
	ServiceAccountTokens *serviceaccounttoken.Tokens
	// ServiceAccountSecrets is where a legacy token's last use is
	// recorded (a label on its Secret): the loopback client.
	ServiceAccountSecrets typedcorev1.SecretsGetter
}

// ApplyTo sets the authenticator of config; the authorizer is
// AuthorizationConfig's.
func (a AuthenticationConfig) ApplyTo(config *genericapiserver.Config) error {
	var authenticators []authenticator.Request
	if a.ClientCAFile != "" {
		ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", a.ClientCAFile)
		if err != nil {
			return fmt.Errorf("loading the client CA file %s: %w", a.ClientCAFile, err)
		}
		if err := config.Authentication.ApplyClientCert(ca, config.SecureServing); err != nil {
			return fmt.Errorf("requesting client certificates signed by %s: %w", a.ClientCAFile, err)
		}
		authenticators = append(authenticators, x509request.NewDynamic(ca.VerifyOptions, x509request.CommonNameUserConversion))
	}
	if a.AgentClientCAFile != "" {
		agents, err := agentAuthenticator(a.AgentClientCAFile, config)
		if err != nil {
			return err
		}
		authenticators = append(authenticators, agents)
	}
	if a.TokenAuthFile != "" {
		tokens, err := tokenfile.NewCSV(a.TokenAuthFile)
		if err != nil {
			return fmt.Errorf("loading the token file %s: %w", a.TokenAuthFile, err)
		}
		authenticators = append(authenticators, bearertoken.New(tokens))
	}
	if a.BootstrapTokens != nil {
		authenticators = append(authenticators, bootstrapTokenAuthenticator(a.BootstrapTokens))
	}
	if a.ServiceAccountTokens != nil {
		tokens, err := a.ServiceAccountTokens.Authenticator(a.ServiceAccountSecrets)
		if err != nil {
			return fmt.Errorf("the service-account token authenticator: %w", err)
		}
		authenticators = append(authenticators, bearertoken.New(tokens))
		// Requests are checked against the API's audiences: a token
		// requested for another audience (kubectl create token
		// --audience) does not authenticate here.
		config.Authentication.APIAudiences = a.ServiceAccountTokens.Audiences()
	}
	auth := group.NewAuthenticatedGroupAdder(union.New(authenticators...))
	if a.Anonymous {
		// Credentials that fail are a 401, not anonymous.
		auth = union.NewFailOnError(auth, anonymous.NewAuthenticator(nil))
	}
	config.Authentication.Authenticator = auth
	return nil
}
