package serviceaccounttoken

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/kubernetes/pkg/serviceaccount"
)

// DefaultIssuer is the iss claim of the federation's tokens unless
// --service-account-issuer says otherwise. It is not a member's
// (https://kubernetes.default.svc), so that whoever reads a token sees
// which API server issued it; the key, not the issuer, is what keeps
// members from accepting it.
const DefaultIssuer = "https://federation-apiserver.federation-system.svc"

// Options configure Tokens.
type Options struct {
	// Issuers are accepted in the iss claim; the first is written into
	// new tokens (as kube-apiserver's --service-account-issuer).
	Issuers []string
	// Keys sign and verify.
	Keys *Keys
	// RootCA is what legacy token Secrets get as ca.crt: the CA of the
	// federation apiserver's serving certificate.
	RootCA []byte
}

// Tokens issues and verifies the federation's service-account tokens.
type Tokens struct {
	issuers []string
	// audiences are the API's audiences: its issuers, as kube-apiserver's
	// --api-audiences default. A token requested without audiences gets
	// them, and only a token for one of them authenticates here.
	audiences  authenticator.Audiences
	bound      serviceaccount.TokenGenerator
	legacy     serviceaccount.TokenGenerator
	publicKeys serviceaccount.PublicKeysGetter
	objects    *Objects
	rootCA     []byte
}

// New checks the options and prepares the generators and keys.
func New(o Options) (*Tokens, error) {
	if err := ValidateIssuers(o.Issuers); err != nil {
		return nil, err
	}
	if o.Keys == nil || o.Keys.Signing == nil {
		return nil, fmt.Errorf("--service-account-signing-key-file: no signing key")
	}
	bound, err := serviceaccount.JWTTokenGenerator(o.Issuers[0], o.Keys.Signing)
	if err != nil {
		return nil, fmt.Errorf("--service-account-signing-key-file: %w", err)
	}
	// Legacy Secrets' tokens carry the legacy issuer, as
	// kube-controller-manager's tokens controller writes them; the
	// legacy authenticator accepts only that issuer.
	legacy, err := serviceaccount.JWTTokenGenerator(serviceaccount.LegacyIssuer, o.Keys.Signing)
	if err != nil {
		return nil, fmt.Errorf("--service-account-signing-key-file: %w", err)
	}
	publicKeys, err := serviceaccount.StaticPublicKeysGetter(o.Keys.Verifying)
	if err != nil {
		return nil, fmt.Errorf("--service-account-key-file: %w", err)
	}
	return &Tokens{
		issuers:    o.Issuers,
		audiences:  authenticator.Audiences(o.Issuers),
		bound:      bound,
		legacy:     legacy,
		publicKeys: publicKeys,
		objects:    &Objects{},
		rootCA:     o.RootCA,
	}, nil
}

// ValidateIssuers refuses issuers kube-apiserver would refuse: none, or
// one that ValidateIssuer refuses.
func ValidateIssuers(issuers []string) error {
	if len(issuers) == 0 {
		return fmt.Errorf("--service-account-issuer: at least one issuer is needed")
	}
	var errs []error
	for _, iss := range issuers {
		errs = append(errs, ValidateIssuer(iss))
	}
	return errors.Join(errs...)
}

// ValidateIssuer refuses an issuer kube-apiserver would refuse: empty, or
// with a colon but not a URL.
func ValidateIssuer(iss string) error {
	if iss == "" {
		return fmt.Errorf("--service-account-issuer: an issuer may not be empty")
	}
	if strings.Contains(iss, ":") {
		if _, err := url.Parse(iss); err != nil {
			return fmt.Errorf("--service-account-issuer %q contains a colon but is not a URL: %w", iss, err)
		}
	}
	return nil
}

// Generator signs the tokens of serviceaccounts/token.
func (t *Tokens) Generator() serviceaccount.TokenGenerator { return t.bound }

// LegacyGenerator signs the tokens of legacy token Secrets.
func (t *Tokens) LegacyGenerator() serviceaccount.TokenGenerator { return t.legacy }

// Audiences are the API's audiences.
func (t *Tokens) Audiences() authenticator.Audiences { return t.audiences }

// RootCA is legacy token Secrets' ca.crt.
func (t *Tokens) RootCA() []byte { return t.rootCA }

// Objects reads the ServiceAccounts and Secrets tokens name, once bound to
// the server's storage.
func (t *Tokens) Objects() *Objects { return t.objects }

// Authenticator verifies bearer tokens the federation signed: bound tokens
// of its issuers (the ServiceAccount, and a Secret the token is bound to,
// must still exist with the UIDs in the token), and legacy Secrets' tokens
// (the Secret must still exist and hold the very token, and the
// ServiceAccount exist with its UID). secrets is how the legacy validator
// records a token's last use on its Secret, as kube-apiserver does.
// A token of another issuer is not this authenticator's: the next one
// decides. One of a known issuer but not signed by the federation's keys
// (a member's own, whose legacy issuer is the same) fails: 401.
func (t *Tokens) Authenticator(secrets typedcorev1.SecretsGetter) (authenticator.Token, error) {
	bound := serviceaccount.JWTTokenAuthenticator(t.issuers, t.publicKeys, t.audiences, serviceaccount.NewValidator(t.objects))
	validator, err := serviceaccount.NewLegacyValidator(true, t.objects, secrets)
	if err != nil {
		return nil, err
	}
	legacy := serviceaccount.JWTTokenAuthenticator([]string{serviceaccount.LegacyIssuer}, t.publicKeys, t.audiences, validator)
	return tokenunion.New(bound, legacy), nil
}
