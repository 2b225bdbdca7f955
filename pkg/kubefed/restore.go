package kubefed

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/federation-v1/federation/pkg/processplane"
)

// restoreOptions are the flags of kubefed restore.
type restoreOptions struct {
	file string
}

func (o *restoreOptions) validate() error {
	if o.file == "" {
		return errors.New("-f/--filename naming the snapshot file of `kubefed backup` is required")
	}
	return nil
}

func newRestoreCommand(_ *globalFlags) *cobra.Command {
	o := &restoreOptions{}
	cmd := localCommand("restore", "Replace the data of a stopped local federation with a snapshot of `kubefed backup`",
		func(cmd *cobra.Command, plane *processplane.Plane) error {
			aside, err := plane.Restore(o.file, time.Now())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Federation %q restored from %s\n", plane.Name, o.file)
			if aside != "" {
				fmt.Fprintf(out, "Its former data is kept in %s\n", aside)
			}
			fmt.Fprintf(out, "Start it with `kubefed start %s`. Member copies made after the backup are left in the members: `kubefed strays --context=%s` lists them\n", plane.Name, plane.Name)
			return nil
		})
	cmd.Long = `Replace the data of a stopped local federation with an etcd snapshot written
by kubefed backup. The current data folder is kept beside it as
data.before-restore-TIME. Nothing is written to the member clusters: copies
whose federated object the snapshot does not hold stay there, and
kubefed strays lists them.`
	cmd.PreRunE = func(*cobra.Command, []string) error { return o.validate() }
	cmd.Flags().StringVarP(&o.file, "filename", "f", "", "snapshot file to restore (required)")
	return cmd
}
