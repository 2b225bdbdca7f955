package kubefed

import "github.com/spf13/cobra"

// clusterFlags name the member cluster and the federation that join and
// unjoin act on.
type clusterFlags struct {
	*globalFlags
	// cluster is the Cluster's name (the argument).
	cluster string
	// federation is the federation's kubeconfig context (--context).
	federation string
	// clusterContext is the member's kubeconfig context; default cluster.
	clusterContext string
	// hostClusterContext is accepted for v1 command lines and unused: v1
	// kept the credentials in the host cluster, we keep them in the
	// federation itself.
	hostClusterContext string
}

func (c *clusterFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.federation, "context", "", "kubeconfig context of the federation")
	cmd.Flags().StringVar(&c.clusterContext, "cluster-context", "", "kubeconfig context of the cluster (default CLUSTER_NAME)")
	cmd.Flags().StringVar(&c.hostClusterContext, "host-cluster-context", "", "accepted for Federation v1 compatibility and unused: join keeps the cluster's credentials in the federation's own federation-system namespace, wherever its control plane runs")
}

// complete takes the cluster name from args and defaults the member's context.
func (c *clusterFlags) complete(args []string) {
	c.cluster = args[0]
	if c.clusterContext == "" {
		c.clusterContext = c.cluster
	}
}
