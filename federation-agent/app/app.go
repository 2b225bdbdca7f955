// Package app holds the federation-agent command: its flags, how it gets
// its identity at the federation, and the process that holds the tunnel.
package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/agent"
	"github.com/federation-v1/federation/pkg/agentcredential"
	fedversion "github.com/federation-v1/federation/pkg/version"
)

// Options are the agent's flags.
type Options struct {
	Cluster            string
	Federation         []string
	FederationCAFile   string
	CACertHash         string
	Token              string
	TokenFile          string
	CertDir            string
	CredentialSecret   string
	MemberKubeconfig   string
	MemberTokenFile    string
	MetricsBindAddress string
}

// NewCommand returns the federation-agent command.
func NewCommand() *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "federation-agent --cluster=NAME --federation=https://ADDRESS --token=TOKEN (--ca-cert-hash=sha256:HASH | --federation-ca-file=FILE)",
		Short: "Hold a member cluster's tunnel to its federation",
		Long: `federation-agent runs in a member cluster that the federation cannot reach.
It dials out to the federation apiserver (one outbound HTTPS connection, through
HTTPS_PROXY when set), opens its cluster's tunnel, and sends the requests the
federation makes through it to the member's API server with its own identity:
the member's credential never leaves the member.

On its first start it trades the bootstrap token of 'kubefed token create' for a
client certificate of its own (a CertificateSigningRequest at the federation),
kept in --cert-dir (or, in a pod, in the member Secret --credential-secret) and
renewed before it expires.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: false,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Cluster, "cluster", "", "the member's cluster name at the federation")
	f.StringSliceVar(&o.Federation, "federation", nil, "https:// addresses of the federation's apiservers, tried in turn")
	f.StringVar(&o.FederationCAFile, "federation-ca-file", "", "the CA of the federation apiserver's serving certificate")
	f.StringVar(&o.CACertHash, "ca-cert-hash", "", "sha256:HASH of the federation CA's public key, as 'kubefed token create' prints it; the CA is then taken from the federation and checked against it")
	f.StringVar(&o.Token, "token", "", "the bootstrap token of 'kubefed token create' (used once, when --cert-dir holds no certificate yet)")
	f.StringVar(&o.TokenFile, "token-file", "", "a file holding the bootstrap token, in place of --token")
	f.StringVar(&o.CertDir, "cert-dir", "/var/lib/federation-agent", "where the agent keeps its key and certificates")
	f.StringVar(&o.CredentialSecret, "credential-secret", "", "NAMESPACE/NAME of a member Secret (existing; type Opaque) where the agent keeps its key and certificates instead of --cert-dir, read and written with the pod's own service account")
	f.StringVar(&o.MemberKubeconfig, "member-kubeconfig", "", "how to reach the member's API server; empty: the in-cluster service account")
	f.StringVar(&o.MemberTokenFile, "member-token-file", "", "with no --member-kubeconfig, a file with the bearer token the federation's requests act with in the member (re-read as it changes), instead of the pod's service account; the member's address and CA stay the in-cluster ones")
	f.StringVar(&o.MetricsBindAddress, "metrics-bind-address", "", "host:port serving /metrics and /healthz over HTTP; empty: off")
	fedversion.AddFlag(cmd)
	return cmd
}

// Validate checks the flags.
func (o *Options) Validate() error {
	var errs []error
	if errs2 := validation.IsDNS1123Label(o.Cluster); len(errs2) > 0 {
		errs = append(errs, fmt.Errorf("--cluster %q: %s", o.Cluster, errs2[0]))
	}
	if len(o.Federation) == 0 {
		errs = append(errs, errors.New("--federation is required"))
	}
	for _, f := range o.Federation {
		if !strings.HasPrefix(f, "https://") {
			errs = append(errs, fmt.Errorf("--federation %q: want an https:// address", f))
		}
	}
	if (o.FederationCAFile == "") == (o.CACertHash == "") {
		errs = append(errs, errors.New("give exactly one of --federation-ca-file and --ca-cert-hash"))
	}
	if o.Token != "" && o.TokenFile != "" {
		errs = append(errs, errors.New("give --token or --token-file, not both"))
	}
	if o.MemberTokenFile != "" && o.MemberKubeconfig != "" {
		errs = append(errs, errors.New("--member-token-file is for an agent in a pod (no --member-kubeconfig): put the token in the kubeconfig instead"))
	}
	if o.CredentialSecret != "" {
		if _, _, err := splitSecret(o.CredentialSecret); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// splitSecret reads --credential-secret's NAMESPACE/NAME.
func splitSecret(ref string) (namespace, name string, err error) {
	namespace, name, ok := strings.Cut(ref, "/")
	if !ok {
		return "", "", fmt.Errorf("--credential-secret %q: want NAMESPACE/NAME", ref)
	}
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return "", "", fmt.Errorf("--credential-secret %q: namespace: %s", ref, errs[0])
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", "", fmt.Errorf("--credential-secret %q: name: %s", ref, errs[0])
	}
	return namespace, name, nil
}

// Run gets the agent's identity and holds the tunnel until ctx ends.
func (o *Options) Run(ctx context.Context) error {
	member, err := o.memberConfig()
	if err != nil {
		return err
	}
	if o.MetricsBindAddress != "" {
		if err := serveMetrics(ctx, o.MetricsBindAddress); err != nil {
			return err
		}
	}
	var ca []byte
	if o.FederationCAFile != "" {
		if ca, err = os.ReadFile(o.FederationCAFile); err != nil {
			return fmt.Errorf("--federation-ca-file: %w", err)
		}
	} else if ca, err = agentcredential.FetchCA(ctx, o.Federation[0], o.CACertHash); err != nil {
		return err
	}
	token := o.Token
	if o.TokenFile != "" {
		b, err := os.ReadFile(o.TokenFile)
		if err != nil {
			return fmt.Errorf("--token-file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	cfg := agentcredential.Config{Server: o.Federation[0], CAData: ca, BootstrapToken: token, Cluster: o.Cluster, Dir: o.CertDir}
	if o.CredentialSecret != "" {
		if cfg.Store, err = o.secretStore(); err != nil {
			return err
		}
	}
	cred, err := agentcredential.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer cred.Stop()
	klog.FromContext(ctx).Info("The agent has its identity at the federation", "cluster", o.Cluster)
	return agent.Run(ctx, agent.Config{
		Cluster:    o.Cluster,
		Federation: o.Federation,
		TLS:        func() *tls.Config { return cred.TLSClientConfig() },
		Member:     member,
	})
}

// secretStore keeps the agent's certificate in --credential-secret, with
// the pod's own service account.
func (o *Options) secretStore() (*agentcredential.SecretStore, error) {
	namespace, name, err := splitSecret(o.CredentialSecret)
	if err != nil {
		return nil, err
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("--credential-secret is read with the pod's service account, and this is not a pod: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return agentcredential.NewSecretStore(client, namespace, name), nil
}

func (o *Options) memberConfig() (*rest.Config, error) {
	if o.MemberKubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("reaching the member: no --member-kubeconfig, and not in a pod: %w", err)
		}
		if o.MemberTokenFile != "" {
			if _, err := os.Stat(o.MemberTokenFile); err != nil {
				return nil, fmt.Errorf("--member-token-file: %w", err)
			}
			// Read again as it changes, as the pod's own token is.
			cfg.BearerToken, cfg.BearerTokenFile = "", o.MemberTokenFile
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.MemberKubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--member-kubeconfig: %w", err)
	}
	return cfg, nil
}

// serveMetrics serves /metrics and /healthz until ctx ends.
func serveMetrics(ctx context.Context, address string) error {
	listener, err := net.Listen("tcp", address)
	if err != nil {
		return fmt.Errorf("--metrics-bind-address: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", legacyregistry.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = server.Serve(listener) }()
	go func() {
		<-ctx.Done()
		_ = server.Close()
	}()
	return nil
}
