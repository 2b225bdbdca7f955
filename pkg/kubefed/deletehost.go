package kubefed

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/federation-v1/federation/pkg/hostplane"
)

// hostDeleteOptions are delete's flags of a plane in a host cluster.
type hostDeleteOptions struct {
	*globalFlags
	hostClusterContext string
	namespace          string
	deleteData         bool
	waitTimeout        time.Duration
}

func (d *hostDeleteOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&d.hostClusterContext, "host-cluster-context", "", "kubeconfig context of the host cluster the control plane runs in (instead of --local)")
	f.StringVar(&d.namespace, "federation-system-namespace", "federation-system", "namespace of the control plane in the host cluster")
	f.BoolVar(&d.deleteData, "delete-data", false, "also delete etcd's PersistentVolumeClaims (the federation's data): kept otherwise")
	f.DurationVar(&d.waitTimeout, "wait-timeout", 5*time.Minute, "how long to wait for the objects to be gone")
}

// withHost makes cmd (delete --local) delete a plane in a host cluster
// when --host-cluster-context is given; local says whether --local was.
func (d *hostDeleteOptions) withHost(cmd *cobra.Command, local *bool) {
	d.addFlags(cmd)
	deleteLocal := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		switch {
		case d.hostClusterContext != "" && *local:
			return errors.New("--local and --host-cluster-context exclude each other")
		case d.hostClusterContext != "":
			return d.run(cmd, args[0], cmd.OutOrStdout())
		case !*local:
			return errors.New("which control plane? add --local (on this machine), or --host-cluster-context=CONTEXT (in a host cluster)")
		}
		for _, f := range []string{"federation-system-namespace", "delete-data", "wait-timeout"} {
			if cmd.Flags().Changed(f) {
				return fmt.Errorf("--%s is for a plane in a host cluster: add --host-cluster-context", f)
			}
		}
		return deleteLocal(cmd, args)
	}
}

func (d *hostDeleteOptions) run(cmd *cobra.Command, name string, out io.Writer) error {
	if cmd.Flags().Changed("data-dir") {
		return errors.New("--data-dir is for --local: a plane in a host cluster has no folder")
	}
	ctx := cmd.Context()
	cfg, err := d.restConfigFor(d.hostClusterContext)
	if err != nil {
		return err
	}
	host, err := hostplane.NewHost(cfg, d.namespace)
	if err != nil {
		return err
	}
	if err := reachable(ctx, host.Kube, "host cluster "+d.hostClusterContext, cfg.Host); err != nil {
		return err
	}
	var deleted *hostplane.Deleted
	if err := step(out, fmt.Sprintf("Deleting federation %s's objects in namespace %s", name, d.namespace), func() error {
		deleted, err = host.Delete(ctx, name, d.deleteData, d.waitTimeout)
		return err
	}); err != nil {
		return err
	}
	kubeconfig, err := d.pathOptions().GetStartingConfig()
	if err != nil {
		return fmt.Errorf("reading kubeconfig: %w", err)
	}
	if len(deleted.Objects) == 0 && len(deleted.KeptClaims) == 0 && !hasEntry(kubeconfig, name) {
		return fmt.Errorf("federation %q: nothing of it in namespace %s of %s, nor in the kubeconfig", name, d.namespace, d.hostClusterContext)
	}
	if err := step(out, "Updating kubeconfig", func() error { return removeContext(d.pathOptions(), name) }); err != nil {
		return err
	}
	if len(deleted.KeptClaims) > 0 {
		fmt.Fprintf(out, "These resources were kept (etcd's data; --delete-data deletes them):\n")
		for _, c := range deleted.KeptClaims {
			fmt.Fprintf(out, "[PersistentVolumeClaim] %s\n", c)
		}
	}
	fmt.Fprintf(out, "Federation %q deleted (%s)\n", name, plural(len(deleted.Objects), "object"))
	return nil
}

// hasEntry says whether the kubeconfig has a context, cluster or user name.
func hasEntry(cfg *clientcmdapi.Config, name string) bool {
	return cfg.Contexts[name] != nil || cfg.Clusters[name] != nil || cfg.AuthInfos[name] != nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
