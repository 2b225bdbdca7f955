package version

import "github.com/spf13/cobra"

// AddFlag gives cmd a --version flag printing "NAME VERSION (details)"
// (see String), as cobra does for a command with a Version. The flag is
// added here, long name only: -v is the log verbosity of the Kubernetes
// flags, which cobra would otherwise hand to --version.
func AddFlag(cmd *cobra.Command) {
	cmd.Version = String()
	cmd.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	cmd.Flags().Bool("version", false, "print the version of "+cmd.Name()+" and exit")
}
