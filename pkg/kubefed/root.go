// Package kubefed holds the kubefed commands. Each command has an options
// struct with Complete, Validate and Run, as kubectl's commands do.
package kubefed

import (
	"io"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/kubefed/memberview"
	"github.com/federation-v1/federation/pkg/processplane"
	"github.com/federation-v1/federation/pkg/version"
)

// globalFlags are the flags every command shares.
type globalFlags struct {
	// kubeconfig overrides KUBECONFIG and ~/.kube/config.
	kubeconfig string
}

// pathOptions says which kubeconfig file kubefed reads and writes.
func (g *globalFlags) pathOptions() *clientcmd.PathOptions {
	opts := clientcmd.NewDefaultPathOptions()
	if g.kubeconfig != "" {
		opts.LoadingRules.ExplicitPath = g.kubeconfig
	}
	return opts
}

// NewCommand returns the kubefed root command.
func NewCommand(out, errOut io.Writer) *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:   "kubefed",
		Short: "kubefed controls a Kubernetes cluster federation",
		Long: `kubefed creates a federation control plane and joins clusters to it.

Find more information at the project's README.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(out)
	root.SetErr(errOut)
	root.PersistentFlags().StringVar(&g.kubeconfig, "kubeconfig", "", "path of the kubeconfig file to read and update (default: $KUBECONFIG or ~/.kube/config)")
	root.AddCommand(
		newInitCommand(g, processplane.FindBinary),
		newStartCommand(g, processplane.FindBinary),
		newRestartCommand(g, processplane.FindBinary),
		newStopCommand(g),
		newDeleteCommand(g),
		newJoinCommand(g),
		newUnjoinCommand(g),
		newTokenCommand(g),
		newAcceptCommand(g),
		newRegisterCommand(g),
		newBackupCommand(g),
		newRestoreCommand(g),
		newStraysCommand(g),
		newVersionCommand(g),
		memberview.NewKubeconfigCommand(g.pathOptions),
		memberview.NewGetCommand(g.pathOptions),
		memberview.NewLogsCommand(g.pathOptions),
	)
	version.AddFlag(root)
	return root
}
