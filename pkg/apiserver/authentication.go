package apiserver

import (
	"fmt"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// AuthenticationConfig says how clients prove who they are. A request that
// none of the configured methods authenticates is rejected with 401: there
// is no anonymous access.
type AuthenticationConfig struct {
	// ClientCAFile is a PEM bundle of the CAs that sign client certificates.
	// The certificate's common name is the user name, its organizations the
	// groups.
	ClientCAFile string
	// TokenAuthFile is a CSV file of bearer tokens: token,user,uid[,"group1,group2"].
	TokenAuthFile string
}

// ApplyTo sets the authenticator of config, and an authorizer that allows
// every authenticated request (RBAC is future work).
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
	if a.TokenAuthFile != "" {
		tokens, err := tokenfile.NewCSV(a.TokenAuthFile)
		if err != nil {
			return fmt.Errorf("loading the token file %s: %w", a.TokenAuthFile, err)
		}
		authenticators = append(authenticators, bearertoken.New(tokens))
	}
	config.Authentication.Authenticator = group.NewAuthenticatedGroupAdder(union.New(authenticators...))
	config.Authorization.Authorizer = authorizerfactory.NewAlwaysAllowAuthorizer()
	// Let the server's own loopback client in.
	genericapiserver.AuthorizeClientBearerToken(config.LoopbackClientConfig, &config.Authentication, &config.Authorization)
	return nil
}
