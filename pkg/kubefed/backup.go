package kubefed

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/federation-v1/federation/pkg/processplane"
)

// backupOptions are the flags of kubefed backup.
type backupOptions struct {
	output string
}

func (o *backupOptions) validate() error {
	if o.output == "" {
		return errors.New("-o/--output naming the snapshot file to write is required")
	}
	return nil
}

func newBackupCommand(_ *globalFlags) *cobra.Command {
	o := &backupOptions{}
	cmd := localCommand("backup", "Write an etcd snapshot of a running local federation to a file",
		func(cmd *cobra.Command, plane *processplane.Plane) error {
			info, err := plane.Backup(cmd.Context(), o.output)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Federation %q backed up to %s (%d keys, revision %d, %d bytes); it holds the federation's Secrets: keep it safe\n",
				plane.Name, o.output, info.TotalKeys, info.Revision, info.Size)
			return nil
		})
	cmd.Long = `Write an etcd snapshot of a local federation (its embedded etcd) to a file,
readable by its owner only. The federation keeps running. A federation on an
external etcd (--etcd-servers) is backed up with that etcd's own tools.`
	cmd.PreRunE = func(*cobra.Command, []string) error { return o.validate() }
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "snapshot file to write (required)")
	return cmd
}
