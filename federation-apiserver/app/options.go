// Package app holds the federation-apiserver command: its options, their
// validation, and the assembly of the server configuration.
package app

import (
	"fmt"
	"net"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	netutils "k8s.io/utils/net"

	"github.com/federation-v1/federation/pkg/admission/federationannotations"
	"github.com/federation-v1/federation/pkg/admission/federationfinalizer"
	"github.com/federation-v1/federation/pkg/admission/federationquota"
	"github.com/federation-v1/federation/pkg/admission/federationrbac"
	"github.com/federation-v1/federation/pkg/admission/federationworkloads"
	"github.com/federation-v1/federation/pkg/apiserver"
	"github.com/federation-v1/federation/pkg/embeddedetcd"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	servicestore "github.com/federation-v1/federation/pkg/registry/core/service/storage"
	"github.com/federation-v1/federation/pkg/serviceaccounttoken"
)

// Options are the command-line options of federation-apiserver.
type Options struct {
	// SecureServing is the HTTPS listener (--secure-port, --bind-address,
	// --cert-dir, --tls-*).
	SecureServing *genericoptions.SecureServingOptionsWithLoopback
	// Etcd is the storage (--etcd-servers, --etcd-prefix, TLS, watch cache).
	// Without --etcd-servers an embedded etcd runs in --data-dir.
	Etcd *genericoptions.EtcdOptions
	// Admission is the admission chain.
	Admission *genericoptions.AdmissionOptions
	// Audit is the audit log (--audit-policy-file, --audit-log-*,
	// --audit-webhook-*): off unless a policy is given.
	Audit *genericoptions.AuditOptions
	// Authentication is how clients authenticate.
	Authentication apiserver.AuthenticationConfig
	// Authorization is what they may do.
	Authorization apiserver.AuthorizationConfig
	// DataDir holds the embedded etcd's data.
	DataDir string
	// EmbeddedEtcdClientPort is where the embedded etcd also serves clients
	// on 127.0.0.1; it always serves the apiserver on a unix socket in
	// --data-dir.
	EmbeddedEtcdClientPort int
	// EmbeddedEtcdClientTLS secures that port: TLS, and only clients with a
	// certificate of its CA.
	EmbeddedEtcdClientTLS embeddedetcd.ClientTLS
	// EventTTL is how long events are kept.
	EventTTL time.Duration
	// FederationName is the federation's name, as the controller
	// manager's: the members' proxy lets tenants into member namespaces
	// that carry it in their created-by or adopted-by label.
	FederationName string
	// ServiceClusterIPRange is the CIDR of the federation's virtual
	// cluster IPs, the first of which is default/kubernetes'.
	ServiceClusterIPRange string
	// AllowedServiceExternalIPCIDRs are where a Service's externalIPs may
	// be (FederationWorkloads); none by default.
	AllowedServiceExternalIPCIDRs []string
	// ServiceAccountSigningKeyFile signs the federation's service-account
	// tokens; empty, a key made once in --cert-dir does.
	ServiceAccountSigningKeyFile string
	// ServiceAccountKeyFiles verify tokens besides the signing key.
	ServiceAccountKeyFiles []string
	// ServiceAccountIssuers are the tokens' accepted iss claims; the first
	// is written into new ones.
	ServiceAccountIssuers []string
}

// NewOptions returns the default options.
func NewOptions() *Options {
	o := &Options{
		SecureServing:  genericoptions.NewSecureServingOptions().WithLoopback(),
		Etcd:           genericoptions.NewEtcdOptions(storagebackend.NewDefaultConfig("/registry", nil)),
		Admission:      genericoptions.NewAdmissionOptions(),
		Audit:          genericoptions.NewAuditOptions(),
		DataDir:        "federation-data",
		Authentication: apiserver.AuthenticationConfig{Anonymous: true},
		Authorization:  apiserver.AuthorizationConfig{Mode: apiserver.ModeRBAC},
		EventTTL:       time.Hour,
		FederationName: apiserver.DefaultFederationName,
		// The federation's, never a member's: see servicestore.DefaultClusterIPRange.
		ServiceClusterIPRange: servicestore.DefaultClusterIPRange,
		ServiceAccountIssuers: []string{serviceaccounttoken.DefaultIssuer},
	}
	o.SecureServing.BindPort = 6443
	o.SecureServing.ServerCert.PairName = "federation-apiserver"
	// Defaulted by Complete to a folder of --data-dir.
	o.SecureServing.ServerCert.CertDirectory = ""
	o.Etcd.DefaultStorageMediaType = "application/vnd.kubernetes.protobuf"
	o.Etcd.StorageConfig.Codec = legacyscheme.Codecs.LegacyCodec()

	federationannotations.Register(o.Admission.Plugins)
	federationrbac.Register(o.Admission.Plugins)
	federationfinalizer.Register(o.Admission.Plugins, federatedtypes.Resources(), federatedtypes.NeverPropagated)
	// Read as the plugin is made, once the flags are parsed.
	federationworkloads.Register(o.Admission.Plugins, func() []string { return o.AllowedServiceExternalIPCIDRs })
	o.Admission.RecommendedPluginOrder = append(o.Admission.RecommendedPluginOrder, federationfinalizer.PluginName, federationannotations.PluginName, federationrbac.PluginName,
		federationworkloads.PluginName)
	// Last, as in kube-apiserver: only what every other plugin admits is
	// charged to the quotas (the object counts of the federated types).
	federationquota.Register(o.Admission.Plugins)
	o.Admission.RecommendedPluginOrder = append(o.Admission.RecommendedPluginOrder, federationquota.PluginName)
	// The webhook and policy plugins need admissionregistration, which
	// this server does not serve: they stay off.
	o.Admission.DefaultOffPlugins = sets.New(o.Admission.Plugins.Registered()...).
		Delete(lifecycle.PluginName, federationfinalizer.PluginName, federationannotations.PluginName, federationrbac.PluginName, federationworkloads.PluginName)
	o.Admission.DefaultOffPlugins.Delete(federationquota.PluginName)
	return o
}

// AddFlags adds the options' flags to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.SecureServing.AddFlags(fs)
	o.Etcd.AddFlags(fs)
	o.Admission.AddFlags(fs)
	o.Audit.AddFlags(fs)
	fs.StringVar(&o.Authentication.ClientCAFile, "client-ca-file", o.Authentication.ClientCAFile,
		"PEM bundle of the CAs whose client certificates are accepted; the certificate's CommonName is the user name, its Organizations the groups.")
	fs.StringVar(&o.Authentication.AgentClientCAFile, "agent-client-ca-file", o.Authentication.AgentClientCAFile,
		"PEM bundle of the agents CA, which federation-controller-manager signs federation agents' client certificates with (its --agent-signing-cert-file); it must not be a --client-ca-file CA. Its certificates authenticate only as system:federation:agent:CLUSTER in the one group system:federation:agents, whatever else they say, and may only open their own cluster's tunnel and renew their certificate.")
	fs.StringVar(&o.Authentication.TokenAuthFile, "token-auth-file", o.Authentication.TokenAuthFile,
		"CSV file of bearer tokens: token,user,uid[,\"group1,group2\"].")
	fs.BoolVar(&o.Authentication.Anonymous, "anonymous-auth", o.Authentication.Anonymous,
		"Let requests without credentials in as system:anonymous (group system:unauthenticated); RBAC lets them read only /healthz, /livez, /readyz and /version.")
	fs.StringVar(&o.Authorization.Mode, "authorization-mode", o.Authorization.Mode,
		"How requests are authorized: RBAC (roles and bindings of rbac.authorization.k8s.io, with Kubernetes' and the federation's bootstrap policy), or AlwaysAllow (every authenticated request; for trying things out only). Members of system:masters may always do everything.")
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir,
		"Directory of the embedded etcd's data, used when --etcd-servers is not given.")
	fs.IntVar(&o.EmbeddedEtcdClientPort, "embedded-etcd-client-port", o.EmbeddedEtcdClientPort,
		"Port on 127.0.0.1 where the embedded etcd also serves clients, so that the federation DNS server can read its records; 0 serves them only on a unix socket in --data-dir. Without the --embedded-etcd-tls-* and --embedded-etcd-client-ca-file flags the port is plain HTTP that anyone on this machine may read and write.")
	fs.StringVar(&o.EmbeddedEtcdClientTLS.CertFile, "embedded-etcd-tls-cert-file", o.EmbeddedEtcdClientTLS.CertFile,
		"Serving certificate of --embedded-etcd-client-port, which is then HTTPS (valid for 127.0.0.1).")
	fs.StringVar(&o.EmbeddedEtcdClientTLS.KeyFile, "embedded-etcd-tls-private-key-file", o.EmbeddedEtcdClientTLS.KeyFile,
		"Private key of --embedded-etcd-tls-cert-file.")
	fs.StringVar(&o.EmbeddedEtcdClientTLS.CAFile, "embedded-etcd-client-ca-file", o.EmbeddedEtcdClientTLS.CAFile,
		"PEM bundle of the CAs whose client certificates --embedded-etcd-client-port accepts; clients without one are refused.")
	fs.DurationVar(&o.EventTTL, "event-ttl", o.EventTTL, "How long events are kept.")
	fs.StringVar(&o.FederationName, "federation-name", o.FederationName,
		"Name of the federation, as the controller manager's --federation-name: the members' proxy (clusters/NAME/proxy) lets tenants only into member namespaces the federation of this name created or was adopted in.")
	fs.StringVar(&o.ServiceClusterIPRange, "service-cluster-ip-range", o.ServiceClusterIPRange,
		"CIDR of the federation's virtual cluster IPs, one per federated Service (not headless or ExternalName), never propagated: each member allocates its own. Its first address is the Service default/kubernetes'. The default, RFC 2544's benchmarking block, is no cluster installer's service range, so a federation address is never mistaken for a member's. Single-stack, at most 20 host bits.")
	fs.StringSliceVar(&o.AllowedServiceExternalIPCIDRs, "allowed-service-external-ip-cidrs", o.AllowedServiceExternalIPCIDRs,
		"Comma-separated CIDRs inside which a federated Service's spec.externalIPs may be; any other external IP is refused (422), as kube-apiserver's DenyServiceExternalIPs does, because every member's kube-proxy would route traffic for that address, whoever owns it, to the Service (CVE-2020-8554). Addresses a Service already has may stay on update. Empty, the default, allows none.")
	fs.StringVar(&o.ServiceAccountSigningKeyFile, "service-account-signing-key-file", o.ServiceAccountSigningKeyFile,
		"PEM private key (RSA or ECDSA) that signs the federation's service-account tokens (serviceaccounts/token, legacy token Secrets), as kube-apiserver's. Every apiserver of one federation must be given the same key, and no member's: a member then refuses the federation's tokens and the federation a member's. Empty: a key made once into --cert-dir/service-account.key, for one apiserver only.")
	fs.StringSliceVar(&o.ServiceAccountKeyFiles, "service-account-key-file", o.ServiceAccountKeyFiles,
		"PEM files of further public (or private) keys whose tokens are accepted besides the signing key's, e.g. a key being rotated out. Repeatable.")
	fs.StringSliceVar(&o.ServiceAccountIssuers, "service-account-issuer", o.ServiceAccountIssuers,
		"Issuer (iss claim) of the federation's service-account tokens, also the API's audience. Repeatable: the first is written into new tokens, all are accepted.")
}

// EmbeddedEtcd reports whether the server runs its own etcd.
func (o *Options) EmbeddedEtcd() bool {
	return len(o.Etcd.StorageConfig.Transport.ServerList) == 0
}

// validateEmbeddedEtcdClientTLS: the TLS files come all together, and only
// with a client port of the embedded etcd to secure.
func (o *Options) validateEmbeddedEtcdClientTLS() []error {
	t := o.EmbeddedEtcdClientTLS
	if t == (embeddedetcd.ClientTLS{}) {
		return nil
	}
	var errs []error
	if t.CertFile == "" || t.KeyFile == "" || t.CAFile == "" {
		errs = append(errs, fmt.Errorf("--embedded-etcd-tls-cert-file, --embedded-etcd-tls-private-key-file and --embedded-etcd-client-ca-file go together"))
	}
	if !o.EmbeddedEtcd() || o.EmbeddedEtcdClientPort == 0 {
		errs = append(errs, fmt.Errorf("--embedded-etcd-tls-* and --embedded-etcd-client-ca-file need --embedded-etcd-client-port and no --etcd-servers"))
	}
	return errs
}

// Complete fills in what depends on other options: the default --cert-dir
// lives in --data-dir.
func (o *Options) Complete() error {
	if o.SecureServing.ServerCert.CertDirectory == "" {
		o.SecureServing.ServerCert.CertDirectory = filepath.Join(o.DataDir, "certs")
	}
	return nil
}

// Validate returns every problem of the options at once.
func (o *Options) Validate() error {
	var errs []error
	errs = append(errs, o.SecureServing.Validate()...)
	if !o.EmbeddedEtcd() {
		errs = append(errs, o.Etcd.Validate()...)
	} else if o.DataDir == "" {
		errs = append(errs, fmt.Errorf("--data-dir is required when --etcd-servers is not given"))
	}
	errs = append(errs, o.Admission.Validate()...)
	errs = append(errs, o.Audit.Validate()...)
	if err := o.Authorization.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.EmbeddedEtcdClientPort < 0 || o.EmbeddedEtcdClientPort > 65535 {
		errs = append(errs, fmt.Errorf("--embedded-etcd-client-port %d: want 1-65535, or 0 for a unix socket", o.EmbeddedEtcdClientPort))
	}
	errs = append(errs, o.validateEmbeddedEtcdClientTLS()...)
	if len(validation.IsValidLabelValue(o.FederationName)) > 0 || o.FederationName == "" {
		errs = append(errs, fmt.Errorf("--federation-name %q must be a valid label value", o.FederationName))
	}
	if o.EventTTL <= 0 {
		errs = append(errs, fmt.Errorf("--event-ttl must be positive, got %s", o.EventTTL))
	}
	if _, err := o.serviceClusterIPRange(); err != nil {
		errs = append(errs, err)
	}
	if err := serviceaccounttoken.ValidateIssuers(o.ServiceAccountIssuers); err != nil {
		errs = append(errs, err)
	}
	if _, err := federationworkloads.ParseCIDRs(o.AllowedServiceExternalIPCIDRs); err != nil {
		errs = append(errs, fmt.Errorf("--allowed-service-external-ip-cidrs %w", err))
	}
	return utilerrors.NewAggregate(errs)
}

// selfSignedCert generates a serving certificate into --cert-dir when none
// is given, valid for localhost, the loopback addresses and --bind-address.
func (o *Options) selfSignedCert() error {
	ips := []net.IP{netutils.ParseIPSloppy("127.0.0.1"), netutils.ParseIPSloppy("::1")}
	if bind := o.SecureServing.BindAddress; bind != nil && !bind.IsUnspecified() && !bind.IsLoopback() {
		ips = append(ips, bind)
	}
	if err := o.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, ips); err != nil {
		return fmt.Errorf("creating a self-signed serving certificate in %s: %w", o.SecureServing.ServerCert.CertDirectory, err)
	}
	return nil
}

// serviceAccountTokens loads the key that signs and verifies the
// federation's service-account tokens: --service-account-signing-key-file,
// or one made once in --cert-dir (a single apiserver's; HA apiservers are
// given one file). Token Secrets' ca.crt is the serving certificate's CA.
func (o *Options) serviceAccountTokens() (*serviceaccounttoken.Tokens, error) {
	keyFile := o.ServiceAccountSigningKeyFile
	if keyFile == "" {
		keyFile = filepath.Join(o.SecureServing.ServerCert.CertDirectory, "service-account.key")
		created, err := serviceaccounttoken.EnsureSigningKey(keyFile)
		if err != nil {
			return nil, fmt.Errorf("making a service-account signing key (no --service-account-signing-key-file): %w", err)
		}
		if created {
			klog.InfoS("Made a service-account signing key of this apiserver's own: give every apiserver of a federation the same --service-account-signing-key-file", "file", keyFile)
		}
	}
	keys, err := serviceaccounttoken.LoadKeys(keyFile, o.ServiceAccountKeyFiles)
	if err != nil {
		return nil, err
	}
	rootCA, err := serviceaccounttoken.RootCA(o.servingCertFile())
	if err != nil {
		return nil, err
	}
	return serviceaccounttoken.New(serviceaccounttoken.Options{Issuers: o.ServiceAccountIssuers, Keys: keys, RootCA: rootCA})
}

// servingCertFile is the serving certificate's file: --tls-cert-file, or
// the self-signed one in --cert-dir.
func (o *Options) servingCertFile() string {
	if f := o.SecureServing.ServerCert.CertKey.CertFile; f != "" {
		return f
	}
	return filepath.Join(o.SecureServing.ServerCert.CertDirectory, o.SecureServing.ServerCert.PairName+".crt")
}
