// Package membercluster turns a registered Cluster and its credentials
// Secret into a client configuration for the member's API server.
package membercluster

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/apis/federation/validation"
	"github.com/federation-v1/federation/pkg/tunnel/wire"
)

// Keys of a member's credentials Secret in the federation-system namespace:
// a bearer token, or a client certificate and key (the kubernetes.io/tls
// names), with the member's CA. A kubeconfig is still read for
// compatibility, but only for the same data written inline.
const (
	KubeconfigKey = "kubeconfig"
	TokenKey      = "token"
	CAKey         = "ca.crt"
	CertKey       = corev1.TLSCertKey
	KeyKey        = corev1.TLSPrivateKeyKey
)

// Reasons of a RefusedError, used for the Cluster's events and conditions.
const (
	ReasonInvalidCredentials   = "InvalidCredentials"
	ReasonInvalidServerAddress = "InvalidServerAddress"
)

// RequestTimeout bounds every call to a member unless the caller sets its
// own: an unreachable member must never block the controllers.
const RequestTimeout = 30 * time.Second

// ClientQPS and ClientBurst limit the calls to each member cluster; every
// member has its own budget.
const (
	ClientQPS   = 100
	ClientBurst = 200
)

// RefusedError says that a Cluster's address or credentials were refused
// before anything was sent to the member: fixing them is the only remedy.
type RefusedError struct {
	// Reason is ReasonInvalidCredentials or ReasonInvalidServerAddress.
	Reason string
	msg    string
}

func (e *RefusedError) Error() string { return e.msg }

// Refused returns the RefusedError in err's chain, or nil.
func Refused(err error) *RefusedError {
	var r *RefusedError
	if errors.As(err, &r) {
		return r
	}
	return nil
}

// ServerAddress picks the member's address for this control plane: the entry
// for every client (0.0.0.0/0 or ::/0) when there is one, else the first.
func ServerAddress(cluster *federationv1beta1.Cluster) (string, error) {
	entries := cluster.Spec.ServerAddressByClientCIDRs
	for _, e := range entries {
		if e.ClientCIDR == "0.0.0.0/0" || e.ClientCIDR == "::/0" {
			return e.ServerAddress, nil
		}
	}
	if len(entries) == 0 || entries[0].ServerAddress == "" {
		return "", fmt.Errorf("cluster %s has no server address in spec.serverAddressByClientCIDRs", cluster.Name)
	}
	return entries[0].ServerAddress, nil
}

// RESTConfig builds the configuration to reach cluster with the credentials
// in secret. The server always comes from the Cluster, so that editing its
// spec moves the federation to another address. It is checked again here,
// as are the credentials: they are data (a token or a client certificate,
// and a CA), never a command to run, a file to read or a proxy to use, and
// anything else is a RefusedError.
func RESTConfig(cluster *federationv1beta1.Cluster, secret *corev1.Secret) (*rest.Config, error) {
	server, err := ServerAddress(cluster)
	if err != nil {
		return nil, err
	}
	if err := validation.CheckServerAddress(server); err != nil {
		return nil, &RefusedError{Reason: ReasonInvalidServerAddress,
			msg: fmt.Sprintf("cluster %s: spec.serverAddressByClientCIDRs serverAddress %q refused: %v", cluster.Name, server, err)}
	}
	creds, err := credentials(secret)
	if err != nil {
		return nil, &RefusedError{Reason: ReasonInvalidCredentials,
			msg: fmt.Sprintf("cluster %s: credentials Secret %s/%s refused: %v", cluster.Name, secret.Namespace, secret.Name, err)}
	}
	cfg := &rest.Config{
		Host:            server,
		BearerToken:     creds.token,
		TLSClientConfig: rest.TLSClientConfig{CertData: creds.cert, KeyData: creds.key, CAData: creds.ca, ServerName: creds.serverName},
		Timeout:         RequestTimeout,
		UserAgent:       "federation-controller-manager",
	}
	return cfg, nil
}

// AgentRESTConfig builds the configuration to reach an agent member
// (spec.connection: Agent): the federation apiserver's proxy to the
// cluster's tunnel, reached with federation, the caller's own
// configuration for the federation apiserver. The member's credential stays
// with its agent.
func AgentRESTConfig(federation *rest.Config, cluster *federationv1beta1.Cluster) (*rest.Config, error) {
	if federation == nil {
		return nil, fmt.Errorf("cluster %s is reached through its agent, and this process has no configuration for the federation apiserver", cluster.Name)
	}
	base := rest.CopyConfig(federation)
	cfg := &rest.Config{
		Host:            strings.TrimSuffix(base.Host, "/") + wire.ProxyPath(cluster.Name),
		BearerToken:     base.BearerToken,
		BearerTokenFile: base.BearerTokenFile,
		TLSClientConfig: base.TLSClientConfig,
		Proxy:           base.Proxy,
		Dial:            base.Dial,
		Timeout:         RequestTimeout,
		UserAgent:       "federation-controller-manager",
	}
	return cfg, nil
}

// data are the only credentials a member's Secret may give.
type data struct {
	token         string
	cert, key, ca []byte
	serverName    string
}

// credentials reads the Secret's keys: a kubeconfig first (v1's layout),
// else a token, else a client certificate and key.
func credentials(secret *corev1.Secret) (data, error) {
	var d data
	var err error
	switch {
	case len(secret.Data[KubeconfigKey]) > 0:
		if d, err = fromKubeconfig(secret.Data[KubeconfigKey]); err != nil {
			return d, fmt.Errorf("key %q: %w", KubeconfigKey, err)
		}
	case len(secret.Data[TokenKey]) > 0:
		d = data{token: string(bytes.TrimSpace(secret.Data[TokenKey])), ca: secret.Data[CAKey]}
	case len(secret.Data[CertKey]) > 0 || len(secret.Data[KeyKey]) > 0:
		d = data{cert: secret.Data[CertKey], key: secret.Data[KeyKey], ca: secret.Data[CAKey]}
	default:
		return d, fmt.Errorf("it has none of the keys %q, %q or %q and %q", TokenKey, CertKey, KeyKey, KubeconfigKey)
	}
	return d, d.check()
}

// check refuses data that client-go would fail on later, with a clearer
// error now.
func (d data) check() error {
	switch {
	case d.token == "" && len(d.cert) == 0 && len(d.key) == 0:
		return errors.New("it holds neither a token nor a client certificate")
	case bytes.ContainsAny([]byte(d.token), "\r\n\x00"):
		return errors.New("the token holds a line break or a NUL byte")
	case (len(d.cert) == 0) != (len(d.key) == 0):
		return fmt.Errorf("a client certificate needs both %q and %q", CertKey, KeyKey)
	}
	if len(d.cert) > 0 {
		if _, err := tls.X509KeyPair(d.cert, d.key); err != nil {
			return fmt.Errorf("the client certificate and key do not make a pair: %v", err)
		}
	}
	if len(d.ca) > 0 && !x509.NewCertPool().AppendCertsFromPEM(d.ca) {
		return fmt.Errorf("%q holds no PEM certificate", CAKey)
	}
	return nil
}

// Kubeconfig fields that are data, by Go field name; every other field,
// including ones client-go adds later, is refused. Names below are the
// kubeconfig's spelling of the refused fields, for the error.
var (
	allowedUserFields = map[string]bool{
		"LocationOfOrigin": true, "Token": true, "ClientCertificateData": true, "ClientKeyData": true, "Extensions": true,
	}
	allowedClusterFields = map[string]bool{
		"LocationOfOrigin": true, "Server": true, "CertificateAuthorityData": true, "TLSServerName": true,
		"DisableCompression": true, "Extensions": true,
	}
	kubeconfigNames = map[string]string{
		"ClientCertificate": "client-certificate", "ClientKey": "client-key", "TokenFile": "tokenFile",
		"Impersonate": "as", "ImpersonateUID": "as-uid", "ImpersonateGroups": "as-groups", "ImpersonateUserExtra": "as-user-extra",
		"Username": "username", "Password": "password", "AuthProvider": "auth-provider", "Exec": "exec",
		"CertificateAuthority": "certificate-authority", "InsecureSkipTLSVerify": "insecure-skip-tls-verify", "ProxyURL": "proxy-url",
	}
)

// fromKubeconfig takes the inline data of the kubeconfig's current context.
// It only decodes (clientcmd.Load): clientcmd's loaders and client configs
// would read files and run exec or auth-provider plugins.
func fromKubeconfig(raw []byte) (data, error) {
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		return data{}, fmt.Errorf("does not parse as a kubeconfig: %v", err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if cfg.CurrentContext == "" || !ok {
		return data{}, fmt.Errorf("current-context %q names no context", cfg.CurrentContext)
	}
	user, ok := cfg.AuthInfos[ctx.AuthInfo]
	if !ok {
		return data{}, fmt.Errorf("context %q names user %q, which is not in users", cfg.CurrentContext, ctx.AuthInfo)
	}
	cluster, ok := cfg.Clusters[ctx.Cluster]
	if !ok {
		return data{}, fmt.Errorf("context %q names cluster %q, which is not in clusters", cfg.CurrentContext, ctx.Cluster)
	}
	if refused := setFields(user, allowedUserFields); len(refused) > 0 {
		return data{}, refusal("user", ctx.AuthInfo, refused)
	}
	if refused := setFields(cluster, allowedClusterFields); len(refused) > 0 {
		return data{}, refusal("cluster", ctx.Cluster, refused)
	}
	return data{token: user.Token, cert: user.ClientCertificateData, key: user.ClientKeyData,
		ca: cluster.CertificateAuthorityData, serverName: cluster.TLSServerName}, nil
}

func refusal(kind, name string, fields []string) error {
	return fmt.Errorf("%s %q sets %v: refused, a member's credentials must be inline data "+
		"(token, client-certificate-data, client-key-data, certificate-authority-data), "+
		"never a command, a plugin, a file, a password, a proxy, impersonation or skipped TLS verification",
		kind, name, fields)
}

// setFields returns the kubeconfig names of the fields of obj that are set
// but not allowed.
func setFields[T clientcmdapi.AuthInfo | clientcmdapi.Cluster](obj *T, allowed map[string]bool) []string {
	v := reflect.ValueOf(obj).Elem()
	var out []string
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if allowed[f.Name] || isEmpty(v.Field(i)) {
			continue
		}
		name := kubeconfigNames[f.Name]
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	}
	return v.IsZero()
}
