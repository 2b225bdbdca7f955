// Package memberview holds the kubefed commands that reach the member
// clusters through the federation apiserver's proxy
// (/apis/federation/v1beta1/clusters/NAME/proxy, wire.ProxyPath), with the
// user's own federation credential: kubefed kubeconfig writes a kubeconfig
// context per member, kubefed get lists from every member, kubefed logs
// streams pods' logs from every member. The federation authorizes each
// forwarded request for the caller; nothing here reads a member's
// credential.
package memberview

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/generated/clientset/versioned"
	"github.com/federation-v1/federation/pkg/tunnel/wire"
)

// ConfigPaths says which kubeconfig files kubefed reads and writes (the
// root command's --kubeconfig, KUBECONFIG, ~/.kube/config); it is called
// when a command runs, after the flags are parsed.
type ConfigPaths func() *clientcmd.PathOptions

// listTimeout bounds the list of the federation's clusters.
const listTimeout = 30 * time.Second

// errCannotList says that the user may not list the federation's clusters.
var errCannotList = errors.New("you may not list the federation's clusters: name the members with --cluster")

// federationFlags name the federation and the members a command reaches.
type federationFlags struct {
	paths ConfigPaths
	// context is the federation's kubeconfig context (--context).
	context string
	// clusters are the members named with --cluster; none means every
	// cluster the user may list.
	clusters []string
}

func (f *federationFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.context, "context", "", "kubeconfig context of the federation (required)")
	cmd.Flags().StringSliceVar(&f.clusters, "cluster", nil, "member cluster to reach; repeat or separate with commas (default: every cluster of the federation you may list)")
}

// validate checks the flags: a context, and cluster names that are names.
func (f *federationFlags) validate() error {
	if f.context == "" {
		return errors.New("--context naming the federation's kubeconfig context is required")
	}
	for _, name := range f.clusters {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			return fmt.Errorf("--cluster %q: %s", name, strings.Join(msgs, "; "))
		}
	}
	return nil
}

// federation is the federation a command reaches, as the user's kubeconfig
// context names it.
type federation struct {
	// context is the kubeconfig context's name.
	context string
	// config reaches the federation apiserver with the user's credential.
	config *rest.Config
	// namespace is the context's namespace, or default.
	namespace string
}

// load reads the federation's context from the kubeconfig.
func (f *federationFlags) load() (*federation, error) {
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(f.paths().LoadingRules,
		&clientcmd.ConfigOverrides{CurrentContext: f.context})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig context %q: %w", f.context, err)
	}
	ns, _, err := loader.Namespace()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig context %q: %w", f.context, err)
	}
	// Many members and many log streams go through one apiserver: the
	// client-side limit is kubectl's, not client-go's 5 a second.
	cfg.QPS, cfg.Burst = 50, 300
	return &federation{context: f.context, config: cfg, namespace: ns}, nil
}

// resolve loads the federation and its members a command reaches, and the
// namespace it reads in: namespace, else the context's.
func (f *federationFlags) resolve(ctx context.Context, namespace string) (*federation, []string, string, error) {
	fed, err := f.load()
	if err != nil {
		return nil, nil, "", err
	}
	members, err := fed.members(ctx, f.clusters)
	if err != nil {
		return nil, nil, "", err
	}
	if namespace == "" {
		namespace = fed.namespace
	}
	return fed, members, namespace, nil
}

// memberConfig reaches cluster through the federation's proxy with the
// user's own credential: the federation's configuration, whose Host ends in
// the cluster's proxy path. Clients built from it send their requests to
// Host + /api/v1/..., which the proxy forwards to the member.
func (f *federation) memberConfig(cluster string) *rest.Config {
	return memberConfig(f.config, cluster)
}

func memberConfig(fed *rest.Config, cluster string) *rest.Config {
	cfg := rest.CopyConfig(fed)
	cfg.Host = proxyURL(fed.Host, cluster)
	return cfg
}

// proxyURL is the URL of cluster's API at the federation apiserver server.
func proxyURL(server, cluster string) string {
	return strings.TrimSuffix(server, "/") + wire.ProxyPath(cluster)
}

// members returns the clusters named with --cluster, else every cluster of
// the federation the user may list.
func (f *federation) members(ctx context.Context, named []string) ([]string, error) {
	if len(named) > 0 {
		return uniqueSorted(named), nil
	}
	names, err := f.listClusters(ctx)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("the federation of context %s has no member clusters", f.context)
	}
	return names, nil
}

// listClusters lists the names of the federation's Cluster objects.
func (f *federation) listClusters(ctx context.Context) ([]string, error) {
	client, err := versioned.NewForConfig(f.config)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	list, err := client.FederationV1beta1().Clusters().List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("%w (%w)", errCannotList, err)
	}
	if err != nil {
		return nil, fmt.Errorf("listing the clusters of the federation at %s: %w", f.config.Host, err)
	}
	names := make([]string, 0, len(list.Items))
	for _, c := range list.Items {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	return names, nil
}

// uniqueSorted returns names sorted, each once.
func uniqueSorted(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}
