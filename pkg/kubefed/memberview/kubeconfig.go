package memberview

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeconfigOptions are the flags of kubefed kubeconfig.
type kubeconfigOptions struct {
	federationFlags
	prune bool
}

// NewKubeconfigCommand returns kubefed kubeconfig.
func NewKubeconfigCommand(paths ConfigPaths) *cobra.Command {
	o := &kubeconfigOptions{federationFlags: federationFlags{paths: paths}}
	cmd := &cobra.Command{
		Use:   "kubeconfig --context=FEDERATION [--cluster=NAME ...] [--prune]",
		Short: "Write a kubeconfig context per member cluster, reaching it through the federation",
		Long: `Write into your kubeconfig one context per member cluster, named
FEDERATION/CLUSTER, that reaches the cluster through the federation apiserver's
proxy with your own federation credential: its server is the federation's
server and the cluster's proxy path (/apis/federation/v1beta1/clusters/CLUSTER/proxy),
with the federation's CA and TLS settings, and its user is the federation
context's own user entry (no credential is copied). Any kubectl command then
works on a member: kubectl --context=FEDERATION/CLUSTER get pods. The federation
authorizes every request for you.

Without --cluster, every cluster of the federation you may list. Running it
again changes nothing; the namespace you set on a member's context is kept.
A context of a cluster that has left the federation is reported and kept,
unless --prune.`,
		Example: `  # A context per member of the federation of context fed
  kubefed kubeconfig --context=fed
  kubectl --context=fed/cluster2 get pods

  # Only two members (when you may not list the federation's clusters)
  kubefed kubeconfig --context=fed --cluster=cluster1,cluster2

  # Also remove the contexts of clusters that have left
  kubefed kubeconfig --context=fed --prune`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	o.addFlags(cmd)
	cmd.Flags().BoolVar(&o.prune, "prune", false, "remove the FEDERATION/CLUSTER contexts of clusters that are no longer in the federation")
	return cmd
}

func (o *kubeconfigOptions) run(ctx context.Context, out io.Writer) error {
	access := o.paths()
	cfg, err := access.GetStartingConfig()
	if err != nil {
		return fmt.Errorf("reading kubeconfig: %w", err)
	}
	// The clusters are listed unless --cluster names them all and nothing
	// is pruned; a user who may not list them names them.
	var existing sets.Set[string]
	members := uniqueSorted(o.clusters)
	if len(members) == 0 || o.prune {
		fed, err := o.load()
		if err != nil {
			return err
		}
		names, err := fed.listClusters(ctx)
		if err != nil {
			if errors.Is(err, errCannotList) && o.prune {
				return fmt.Errorf("--prune needs the list of the federation's clusters: %w", err)
			}
			return err
		}
		existing = sets.New(names...)
		if len(members) == 0 {
			members = names
		}
		for _, m := range members {
			if !existing.Has(m) {
				return fmt.Errorf("cluster %s is not in the federation of context %s", m, o.context)
			}
		}
	}
	if len(members) == 0 {
		return fmt.Errorf("the federation of context %s has no member clusters", o.context)
	}
	changes, err := planMemberContexts(cfg, o.context, members, existing, o.prune)
	if err != nil {
		return err
	}
	if changed(changes) {
		if err := clientcmd.ModifyConfig(access, *cfg, true); err != nil {
			return fmt.Errorf("writing kubeconfig: %w", err)
		}
	}
	printChanges(out, changes)
	return nil
}

// printChanges says what happened to each context.
func printChanges(out io.Writer, changes []contextChange) {
	for _, c := range changes {
		switch c.action {
		case contextStale:
			fmt.Fprintf(out, "Context %q kept: cluster %s is no longer in the federation (--prune removes it)\n", c.name, c.cluster)
		case contextRemoved:
			fmt.Fprintf(out, "Context %q removed: cluster %s is no longer in the federation\n", c.name, c.cluster)
		default:
			fmt.Fprintf(out, "Context %q %s (server %s)\n", c.name, c.action, c.server)
		}
	}
	if !changed(changes) {
		fmt.Fprintln(out, "Nothing to change in the kubeconfig.")
		return
	}
	for _, c := range changes {
		if c.action != contextRemoved && c.action != contextStale {
			fmt.Fprintf(out, "Kubeconfig updated. Try: kubectl --context=%s get pods\n", c.name)
			return
		}
	}
	fmt.Fprintln(out, "Kubeconfig updated.")
}
