package kubefed

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/federation-v1/federation/pkg/localplane"
)

// localCommand builds start, stop and delete, which act on a local plane.
func localCommand(use, short string, run func(cmd *cobra.Command, plane *localplane.Plane) error) *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   use + " FEDERATION_NAME",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := planeDir(args[0], dataDir)
			if err != nil {
				return err
			}
			plane, err := localplane.Load(dir)
			if errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("no local federation %q in %s (create one with `kubefed init %s --local`)", args[0], dir, args[0])
			}
			if err != nil {
				return err
			}
			return run(cmd, plane)
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "folder of the local control plane (default ~/.federation/FEDERATION_NAME)")
	return cmd
}

func newStartCommand(_ *globalFlags, find func(string) (string, error)) *cobra.Command {
	return localCommand("start", "Start a stopped local federation control plane again, with its data",
		func(cmd *cobra.Command, plane *localplane.Plane) error {
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
		func(cmd *cobra.Command, plane *localplane.Plane) error {
			if err := plane.Stop(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Federation %q stopped; `kubefed start %s` starts it again\n", plane.Name, plane.Name)
			return nil
		})
}

func newDeleteCommand(g *globalFlags) *cobra.Command {
	var local bool
	cmd := localCommand("delete", "Delete a local federation control plane: its processes, data and kubeconfig entries",
		func(cmd *cobra.Command, plane *localplane.Plane) error {
			if !local {
				return errors.New("only local control planes can be deleted: add --local")
			}
			if err := plane.Delete(); err != nil {
				return err
			}
			if err := removeContext(g.pathOptions(), plane.Name); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Federation %q deleted\n", plane.Name)
			return nil
		})
	cmd.Flags().BoolVar(&local, "local", false, "the control plane runs on this machine (required)")
	return cmd
}
