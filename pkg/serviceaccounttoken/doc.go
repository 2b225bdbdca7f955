// Package serviceaccounttoken lets ServiceAccounts of the federation
// authenticate to it, as they do to a cluster: it loads the federation's
// service-account signing key, signs the tokens of the TokenRequest API
// (serviceaccounts/token) and of legacy token Secrets with Kubernetes' own
// JWT generator and claims (k8s.io/kubernetes/pkg/serviceaccount), and
// verifies them with Kubernetes' own authenticator, which checks that the
// ServiceAccount, and the Secret a token is bound to, still exist with the
// UIDs the token names.
//
// The key is the federation's own: no member shares it, so no member
// accepts a federation token and the federation accepts no member's. Every
// apiserver of a federation must be given the same key file.
package serviceaccounttoken
