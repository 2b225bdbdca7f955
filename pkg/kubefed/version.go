package kubefed

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"

	"github.com/federation-v1/federation/pkg/version"
)

// versionOptions are the flags of kubefed version.
type versionOptions struct {
	*globalFlags
	context string
	client  bool
	output  string
}

// versions is what -o json|yaml prints, as kubectl version does.
type versions struct {
	ClientVersion *apimachineryversion.Info `json:"clientVersion,omitempty"`
	ServerVersion *apimachineryversion.Info `json:"serverVersion,omitempty"`
}

func newVersionCommand(g *globalFlags) *cobra.Command {
	o := &versionOptions{globalFlags: g}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of kubefed and of the federation apiserver",
		Long: `Print the version of kubefed and of the federation apiserver of a kubeconfig
context (--context, default the current one). The apiserver's /version names the
Kubernetes release whose API it serves, with the federation's own version as
build metadata (v1.36.3+federation.VERSION); its gitCommit and buildDate are the
federation's.`,
		Example: `  kubefed version --context=fed
  kubefed version --client -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.output != "" && o.output != "json" && o.output != "yaml" {
				return fmt.Errorf("--output %q: want json or yaml", o.output)
			}
			return o.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.context, "context", "", "kubeconfig context of the federation (default: the current context)")
	cmd.Flags().BoolVar(&o.client, "client", false, "print only kubefed's version; no server is asked")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "json or yaml; default: one line each")
	return cmd
}

func (o *versionOptions) run(ctx context.Context, out io.Writer) error {
	client := version.Get()
	v := versions{ClientVersion: &client}
	var serverErr error
	if !o.client {
		v.ServerVersion, serverErr = o.serverVersion(ctx)
	}
	switch o.output {
	case "json", "yaml":
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if o.output == "yaml" {
			if data, err = yaml.JSONToYAML(data); err != nil {
				return err
			}
		}
		fmt.Fprintln(out, strings.TrimSuffix(string(data), "\n"))
	default:
		fmt.Fprintf(out, "Client Version: %s\n", version.String())
		if v.ServerVersion != nil {
			fmt.Fprintf(out, "Server Version: %s\n", describeServer(v.ServerVersion))
		}
	}
	return serverErr
}

// serverVersion reads /version of the context's server.
func (o *versionOptions) serverVersion(ctx context.Context) (*apimachineryversion.Info, error) {
	cfg, err := o.restConfigFor(o.context)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	raw, err := dc.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, fmt.Errorf("reading the version of the server at %s: %w", cfg.Host, err)
	}
	info := &apimachineryversion.Info{}
	if err := json.Unmarshal(raw, info); err != nil {
		return nil, fmt.Errorf("reading the version of the server at %s: %w", cfg.Host, err)
	}
	return info, nil
}

// describeServer is the server's line: the federation's version and build,
// and the Kubernetes API it serves.
func describeServer(info *apimachineryversion.Info) string {
	fed, ok := version.FromServed(info.GitVersion)
	if !ok {
		return info.GitVersion + " (not a federation apiserver: no federation version in its gitVersion)"
	}
	details := []string{}
	if info.GitCommit != "" {
		details = append(details, "commit "+info.GitCommit)
	}
	if info.BuildDate != "" {
		details = append(details, "built "+info.BuildDate)
	}
	kube, _, _ := strings.Cut(info.GitVersion, "+")
	details = append(details, "serving the API of Kubernetes "+strings.TrimPrefix(kube, "v"))
	return fmt.Sprintf("%s (%s)", fed, strings.Join(details, ", "))
}
