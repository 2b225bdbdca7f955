package kubefed

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/federation-v1/federation/pkg/processplane"
)

// localCommand builds start, stop, delete, backup and restore, which act
// on an existing local plane: the one in --data-dir, else the one init
// recorded for the name (processplane.Locate).
func localCommand(use, short string, run func(cmd *cobra.Command, plane *processplane.Plane) error) *cobra.Command {
	return localCommandOr(use, short, run, nil)
}

// localCommandOr is localCommand with stale, which handles a name whose
// recorded folder is gone (nil: that is an error).
func localCommandOr(use, short string, run func(cmd *cobra.Command, plane *processplane.Plane) error,
	stale func(cmd *cobra.Command, reg *processplane.Registry, err *processplane.StaleRecordError) error) *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   use + " FEDERATION_NAME",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := processplane.DefaultRegistry()
			if err != nil {
				return err
			}
			plane, err := processplane.Locate(reg, args[0], dataDir)
			var staleErr *processplane.StaleRecordError
			if errors.As(err, &staleErr) && stale != nil {
				return stale(cmd, reg, staleErr)
			}
			if err != nil {
				return err
			}
			return run(cmd, plane)
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "folder of the local control plane (default: the one `kubefed init` used, ~/.federation/FEDERATION_NAME unless --data-dir)")
	return cmd
}

func newStartCommand(_ *globalFlags, find func(string) (string, error)) *cobra.Command {
	return localCommand("start", "Start a stopped local federation control plane again, with its data",
		func(cmd *cobra.Command, plane *processplane.Plane) error {
			if err := plane.Start(find); err != nil {
				return err
			}
			if err := plane.WaitReady(cmd.Context(), nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Federation API server is running at: %s\n", plane.Server)
			return nil
		})
}

func newStopCommand(_ *globalFlags) *cobra.Command {
	return localCommand("stop", "Stop a local federation control plane, keeping its data",
		func(cmd *cobra.Command, plane *processplane.Plane) error {
			if err := plane.Stop(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Federation %q stopped; `kubefed start %s` starts it again\n", plane.Name, plane.Name)
			return nil
		})
}

func newDeleteCommand(g *globalFlags) *cobra.Command {
	var local bool // withHost requires it, or --host-cluster-context
	cmd := localCommandOr("delete", "Delete a federation control plane: its processes and data (--local), or its objects in the host cluster (--host-cluster-context); and its kubeconfig entries",
		func(cmd *cobra.Command, plane *processplane.Plane) error {
			if err := plane.Delete(); err != nil {
				return err
			}
			if err := forget(plane.Name, plane.Dir); err != nil {
				return err
			}
			if err := removeContext(g.pathOptions(), plane.Name); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Federation %q deleted\n", plane.Name)
			return nil
		},
		// Its folder went by hand: what is left of it is the record and
		// the kubeconfig entries.
		func(cmd *cobra.Command, reg *processplane.Registry, stale *processplane.StaleRecordError) error {
			if err := reg.Forget(stale.Name, stale.Dir); err != nil {
				return err
			}
			if err := removeContext(g.pathOptions(), stale.Name); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Federation %q: its folder %s was gone already; its record and kubeconfig entries are removed\n", stale.Name, stale.Dir)
			return nil
		})
	cmd.Flags().BoolVar(&local, "local", false, "the control plane runs on this machine")
	(&hostDeleteOptions{globalFlags: g}).withHost(cmd, &local)
	return cmd
}

// forget removes the registry's record of the federation name in dir.
func forget(name, dir string) error {
	reg, err := processplane.DefaultRegistry()
	if err != nil {
		return err
	}
	return reg.Forget(name, dir)
}
