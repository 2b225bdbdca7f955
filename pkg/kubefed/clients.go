package kubefed

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/generated/clientset/versioned"
)

// preflightTimeout bounds the first call to a cluster, so that an
// unreachable server fails fast and before anything is created.
const preflightTimeout = 10 * time.Second

// restConfigFor returns the client configuration of a kubeconfig context.
func (g *globalFlags) restConfigFor(context string) (*rest.Config, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		g.pathOptions().LoadingRules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig context %q: %w", context, err)
	}
	cfg.Timeout = 30 * time.Second
	return cfg, nil
}

// reachable checks that the server of cfg answers, naming what for.
func reachable(ctx context.Context, client kubernetes.Interface, what, host string) error {
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	if _, err := client.Discovery().RESTClient().Get().AbsPath("/version").DoRaw(ctx); err != nil {
		return fmt.Errorf("%s at %s is not reachable: %w", what, host, err)
	}
	return nil
}

// federationClients are the clients of the federation apiserver.
type federationClients struct {
	kube kubernetes.Interface
	fed  versioned.Interface
	host string
}

func (g *globalFlags) federation(ctx context.Context, context string) (*federationClients, error) {
	if context == "" {
		return nil, fmt.Errorf("--context naming the federation's kubeconfig context is required")
	}
	cfg, err := g.restConfigFor(context)
	if err != nil {
		return nil, err
	}
	c := &federationClients{host: cfg.Host}
	if c.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if c.fed, err = versioned.NewForConfig(cfg); err != nil {
		return nil, err
	}
	return c, reachable(ctx, c.kube, "federation "+context, cfg.Host)
}

// memberClient reaches the member cluster of kubeconfig context name, and
// fails unless it answers.
func (g *globalFlags) memberClient(ctx context.Context, name string) (*rest.Config, kubernetes.Interface, error) {
	cfg, err := g.restConfigFor(name)
	if err != nil {
		return nil, nil, err
	}
	member, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := reachable(ctx, member, "cluster context "+name, cfg.Host); err != nil {
		return nil, nil, err
	}
	return cfg, member, nil
}
