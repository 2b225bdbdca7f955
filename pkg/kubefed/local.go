package kubefed

import (
	"errors"
	"fmt"
	"time"

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

func newRestartCommand(_ *globalFlags, find func(string) (string, error)) *cobra.Command {
	cmd := localCommand("restart", "Restart a local federation's processes one at a time, with the binaries beside this kubefed: an upgrade that keeps an HA federation serving",
		func(cmd *cobra.Command, plane *processplane.Plane) error {
			out := cmd.OutOrStdout()
			err := plane.Roll(cmd.Context(), find, func(instance string, took time.Duration) {
				fmt.Fprintf(out, "%s restarted (%s)\n", instance, took.Round(100*time.Millisecond))
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "Federation API server is running at: %s\n", plane.Server)
			return nil
		})
	cmd.Long = `Restart every process of a local federation control plane one at a time, in start
order (etcd members, apiservers, controller managers, the DNS server, local agents), each
with the binary found beside this kubefed and waited for until it serves before the next.
Run with a newer kubefed, it upgrades the plane: with --ha (kubefed init --ha) the
federation answers throughout, and a leading controller manager stopped hands its lease
to the other at once. Processes that were not running are started.`
	return cmd
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
