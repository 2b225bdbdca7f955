package kubefed

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"

	"github.com/federation-v1/federation/pkg/agentcredential"
	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// tokenOptions are the options of `kubefed token create`.
type tokenOptions struct {
	*globalFlags
	cluster, federation, clusterContext string
	ttl                                 time.Duration
	autoAccept                          bool
	// serverAddress is the Cluster's address, which the federation never
	// dials: it reaches an agent's cluster through the agent's tunnel.
	serverAddress string
	now           func() time.Time
}

func newTokenCommand(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Manage the bootstrap tokens of federation agents",
		Long: `Manage the bootstrap tokens with which the agents of member clusters the
federation cannot reach (kubefed register) get their own client certificates.`,
	}
	cmd.AddCommand(newTokenCreateCommand(g))
	return cmd
}

func newTokenCreateCommand(g *globalFlags) *cobra.Command {
	o := &tokenOptions{globalFlags: g, now: time.Now}
	cmd := &cobra.Command{
		Use:   "create CLUSTER_NAME --context=FEDERATION [--ttl=24h] [--auto-accept]",
		Short: "Create a bootstrap token for a member cluster's agent, and print the command that registers the member",
		Long: `Create a bootstrap token for the agent of member cluster CLUSTER_NAME, which the
federation cannot reach: the agent dials out to the federation and holds a tunnel.

The token is a Secret of type bootstrap.kubernetes.io/token in the federation's
federation-system namespace, labelled ` + federationv1beta1.AgentClusterLabel + `=CLUSTER_NAME. It is good for
one certificate of CLUSTER_NAME's agent (system:federation:agent:CLUSTER_NAME), until
--ttl has passed: the agent's certificate request is approved at once with
--auto-accept, else once the federation's admin runs kubefed accept CLUSTER_NAME.
The Cluster CLUSTER_NAME is created if absent, reached through its agent
(spec.connection: Agent).

It prints the token and the command the member's admin runs (kubefed register), with
the pin of the federation's CA (sha256 of its public key, as kubeadm's
--discovery-token-ca-cert-hash), taken from the federation's kubeconfig context.`,
		Example: `  kubefed token create edge1 --context=fed --auto-accept`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cluster = args[0]
			if o.clusterContext == "" {
				o.clusterContext = o.cluster
			}
			if errs := validation.IsDNS1123Label(o.cluster); len(errs) > 0 {
				return fmt.Errorf("cluster name %q: %s", o.cluster, errs[0])
			}
			if o.ttl < 0 {
				return fmt.Errorf("--ttl %s: must not be negative (0: never expires)", o.ttl)
			}
			if o.serverAddress == "" {
				o.serverAddress = "https://" + o.cluster + ".agent.invalid"
			}
			return o.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.federation, "context", "", "kubeconfig context of the federation")
	cmd.Flags().DurationVar(&o.ttl, "ttl", 24*time.Hour, "how long the token is good for; 0 never expires")
	cmd.Flags().BoolVar(&o.autoAccept, "auto-accept", false, "approve the agent's certificate request as soon as it comes with this token; without it, kubefed accept CLUSTER_NAME does")
	cmd.Flags().StringVar(&o.serverAddress, "server-address", "", "address of the Cluster created, for display only: the federation reaches the cluster through its agent (default https://CLUSTER_NAME.agent.invalid)")
	cmd.Flags().StringVar(&o.clusterContext, "cluster-context", "", "the member's kubeconfig context in the printed kubefed register command (default CLUSTER_NAME)")
	return cmd
}

func (o *tokenOptions) run(ctx context.Context, out io.Writer) error {
	fed, err := o.globalFlags.federation(ctx, o.federation)
	if err != nil {
		return err
	}
	cfg, err := o.restConfigFor(o.federation)
	if err != nil {
		return err
	}
	pin, err := caPin(cfg)
	if err != nil {
		return fmt.Errorf("federation context %q: %w", o.federation, err)
	}
	if err := o.ensureCluster(ctx, fed); err != nil {
		return err
	}
	token, secret, err := o.createToken(ctx, fed.kube)
	if err != nil {
		return err
	}
	expires, accept := "never expires", "kubefed accept "+o.cluster+" approves its certificate request"
	if exp := secret.StringData[bootstrapapi.BootstrapTokenExpirationKey]; exp != "" {
		expires = "expires " + exp
	}
	if o.autoAccept {
		accept = "auto-accepted"
	}
	fmt.Fprintf(out, "Bootstrap token for cluster %q (%s, one use, %s): %s\n", o.cluster, expires, accept, token)
	fmt.Fprintf(out, "Run in the member cluster:\n\n")
	fmt.Fprintf(out, "kubefed register %s --federation=%s --federation-name=%s --token=%s --ca-cert-hash=%s --cluster-context=%s\n",
		o.cluster, cfg.Host, o.federation, token, pin, o.clusterContext)
	return nil
}

// ensureCluster creates the agent's Cluster unless there is one; one the
// federation dials directly (kubefed join) is not an agent's.
func (o *tokenOptions) ensureCluster(ctx context.Context, fed *federationClients) error {
	clusters := fed.fed.FederationV1beta1().Clusters()
	existing, err := clusters.Get(ctx, o.cluster, metav1.GetOptions{})
	if err == nil {
		if !federationv1beta1.IsAgent(existing) {
			return fmt.Errorf("cluster %q is joined to the federation directly (spec.connection %q), not through an agent: kubefed unjoin it first", o.cluster, existing.Spec.Connection)
		}
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading the Cluster %q: %w", o.cluster, err)
	}
	cluster := &federationv1beta1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: o.cluster},
		Spec: federationv1beta1.ClusterSpec{
			Connection:                 federationv1beta1.ConnectionAgent,
			ServerAddressByClientCIDRs: []federationv1beta1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: o.serverAddress}},
		},
	}
	if _, err := clusters.Create(ctx, cluster, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the Cluster %q: %w", o.cluster, err)
	}
	return nil
}

// createToken stores a new bootstrap token for o.cluster's agent and
// returns it with its Secret.
func (o *tokenOptions) createToken(ctx context.Context, kube kubernetes.Interface) (string, *corev1.Secret, error) {
	token, err := bootstraputil.GenerateBootstrapToken()
	if err != nil {
		return "", nil, err
	}
	secret := o.tokenSecret(token)
	if _, err := kube.CoreV1().Secrets(federationv1beta1.SystemNamespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		return "", nil, fmt.Errorf("creating the bootstrap token Secret %s/%s: %w", federationv1beta1.SystemNamespace, secret.Name, err)
	}
	return token, secret, nil
}

// tokenSecret is the bootstrap token Secret of token (ID.SECRET), with the
// standard keys of k8s.io/cluster-bootstrap.
func (o *tokenOptions) tokenSecret(token string) *corev1.Secret {
	id, secret := token[:bootstrapapi.BootstrapTokenIDBytes], token[bootstrapapi.BootstrapTokenIDBytes+1:]
	data := map[string]string{
		bootstrapapi.BootstrapTokenIDKey:               id,
		bootstrapapi.BootstrapTokenSecretKey:           secret,
		bootstrapapi.BootstrapTokenDescriptionKey:      "federation agent of cluster " + o.cluster + " (kubefed token create)",
		bootstrapapi.BootstrapTokenUsageAuthentication: "true",
		bootstrapapi.BootstrapTokenExtraGroupsKey:      federationv1beta1.AgentBootstrapGroup,
		federationv1beta1.AgentAutoAcceptKey:           fmt.Sprint(o.autoAccept),
	}
	if o.ttl > 0 {
		data[bootstrapapi.BootstrapTokenExpirationKey] = o.now().Add(o.ttl).UTC().Format(time.RFC3339)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      bootstraputil.BootstrapTokenSecretName(id),
			Namespace: federationv1beta1.SystemNamespace,
			Labels:    map[string]string{federationv1beta1.AgentClusterLabel: o.cluster},
		},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		StringData: data,
	}
}

// caPin is the pin of the federation's CA, as the kubeconfig context has it.
func caPin(cfg *rest.Config) (string, error) {
	data, err := caOf(cfg)
	if err != nil {
		return "", err
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil {
		return "", fmt.Errorf("the federation's CA in the kubeconfig: %w", err)
	}
	return agentcredential.Hash(rootOf(certs)), nil
}

// rootOf is the first self-signed certificate of a CA bundle, else its first.
func rootOf(certs []*x509.Certificate) *x509.Certificate {
	for _, c := range certs {
		if c.IsCA && c.CheckSignatureFrom(c) == nil {
			return c
		}
	}
	return certs[0]
}
