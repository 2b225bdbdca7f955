package memberview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// getOptions are the flags of kubefed get.
type getOptions struct {
	federationFlags
	namespace     string
	allNamespaces bool
	selector      string
	fieldSelector string
	output        string
	timeout       time.Duration

	// resource and name are the arguments.
	resource string
	name     string
}

// NewGetCommand returns kubefed get.
func NewGetCommand(paths ConfigPaths) *cobra.Command {
	o := &getOptions{federationFlags: federationFlags{paths: paths}}
	cmd := &cobra.Command{
		Use:   "get TYPE[/NAME] [NAME] --context=FEDERATION [-n NAMESPACE | -A] [-l SELECTOR] [--cluster=NAME ...]",
		Short: "List objects from every member cluster, through the federation",
		Long: `List objects of one type from every member cluster at once, through the
federation apiserver's proxy with your own federation credential, as one table
with a CLUSTER column first. The columns are each member's own (its server-side
Table, as kubectl get prints), so TYPE is anything kubectl knows: pods, deploy,
a custom resource's plural or short name.

Each member has --timeout to answer. A member that fails (not reachable, or the
federation refuses you there: 403) is named on stderr with its error and the
others print; the exit status is non-zero only when every member failed.`,
		Example: `  # Pods of the context's namespace in every member
  kubefed get pods --context=fed

  # Pods labelled app=web in every namespace of two members, with node and IP
  kubefed get pods -A -l app=web --context=fed --cluster=cluster1,cluster2 -o wide

  # One Deployment in every member
  kubefed get deploy/web -n team-a --context=fed`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(args); err != nil {
				return err
			}
			return o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.addFlags(cmd)
	f := cmd.Flags()
	f.StringVarP(&o.namespace, "namespace", "n", "", "namespace to list in (default: the context's namespace)")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list in every namespace")
	f.StringVarP(&o.selector, "selector", "l", "", "label selector (e.g. app=web,tier!=db)")
	f.StringVar(&o.fieldSelector, "field-selector", "", "field selector (e.g. status.phase=Running)")
	f.StringVarP(&o.output, "output", "o", "", "wide prints every column; default: the usual ones")
	f.DurationVar(&o.timeout, "timeout", 30*time.Second, "how long each member has to answer")
	return cmd
}

// complete reads the arguments (TYPE NAME or TYPE/NAME) and checks the flags.
func (o *getOptions) complete(args []string) error {
	if err := o.validate(); err != nil {
		return err
	}
	o.resource = args[0]
	if typ, name, ok := strings.Cut(args[0], "/"); ok {
		if len(args) > 1 {
			return fmt.Errorf("there is a name in %q: give TYPE/NAME or TYPE NAME, not both", args[0])
		}
		o.resource, o.name = typ, name
	} else if len(args) > 1 {
		o.name = args[1]
	}
	if o.resource == "" || (strings.Contains(args[0], "/") && o.name == "") {
		return fmt.Errorf("%q: want TYPE, TYPE/NAME or TYPE NAME", args[0])
	}
	if strings.Contains(o.resource, ",") {
		return fmt.Errorf("%q: one type at a time", o.resource)
	}
	if o.output != "" && o.output != "wide" {
		return fmt.Errorf("--output %q: only wide is supported", o.output)
	}
	if o.allNamespaces && o.namespace != "" {
		return errors.New("--namespace and --all-namespaces cannot both be given")
	}
	if o.timeout <= 0 {
		return errors.New("--timeout must be positive")
	}
	return nil
}

// run lists from every member at once and prints what answered.
func (o *getOptions) run(ctx context.Context, out, errOut io.Writer) error {
	fed, members, namespace, err := o.resolve(ctx, o.namespace)
	if err != nil {
		return err
	}
	if o.allNamespaces {
		namespace = ""
	}
	fieldSelector := o.fieldSelector
	if o.name != "" {
		fieldSelector = strings.Trim("metadata.name="+o.name+","+fieldSelector, ",")
	}
	answers := fanOut(ctx, members, o.timeout, func(ctx context.Context, cluster string) (memberTable, error) {
		cfg := fed.memberConfig(cluster)
		r, err := resolveResource(ctx, cfg, o.resource)
		if err != nil {
			return memberTable{}, err
		}
		table, err := listTable(ctx, cfg, listRequest{resource: r, namespace: namespace,
			labelSelector: o.selector, fieldSelector: fieldSelector})
		return memberTable{cluster: cluster, table: table, namespaced: r.namespaced}, err
	})
	if ctx.Err() != nil {
		// Interrupted: the members' errors would only say so.
		return ctx.Err()
	}
	var tables []memberTable
	namespaced := false
	for _, a := range answers {
		if a.err != nil {
			fmt.Fprintf(errOut, "cluster %s: %s\n", a.cluster, escapeControl(a.err.Error()))
			continue
		}
		tables = append(tables, a.value)
		namespaced = namespaced || a.value.namespaced
	}
	if len(tables) == 0 {
		return fmt.Errorf("no member cluster answered (%d asked)", len(members))
	}
	if printTables(out, tables, printOptions{wide: o.output == "wide", namespace: o.allNamespaces && namespaced}) == 0 {
		if namespaced && namespace != "" {
			fmt.Fprintf(errOut, "No resources found in %s namespace.\n", namespace)
		} else {
			fmt.Fprintln(errOut, "No resources found.")
		}
	}
	return nil
}
