package kubefed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/federation-v1/federation/deploy"
	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/hostplane"
	"github.com/federation-v1/federation/pkg/version"
)

// agentRelease is the release the agent chart is rendered as in the
// member's federation-system, and so the name of its objects.
const agentRelease = "federation-agent"

// agentAppName is the agent chart's app.kubernetes.io/name.
const agentAppName = "federation-agent"

// agentDeleteTimeout bounds unjoin's wait for the agent's objects to go.
const agentDeleteTimeout = time.Minute

// agentChartOptions are join's flags of an agent run as a Deployment in
// the member (--agent=deployment).
type agentChartOptions struct {
	image      string
	valuesFile string
	// federationAddresses are what the agent dials; default the
	// federation context's server.
	federationAddresses []string
	// values are read from valuesFile by validate.
	values map[string]any
}

// agentChartFlags are the flags only --agent=deployment uses.
var agentChartFlags = []string{"agent-image", "agent-values", "agent-federation-address"}

func (a *agentChartOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&a.image, "agent-image", "localhost/federation:"+version.Get().GitVersion,
		"with --agent=deployment, the image of the agent's pod (REPOSITORY:TAG; `make image` builds it)")
	f.StringVar(&a.valuesFile, "agent-values", "",
		"with --agent=deployment, YAML file of more values of the agent chart (deploy/charts/federation-agent: hostNetwork, httpsProxy, noProxy, resources, nodeSelector, ...); the values join sets win over the file's")
	f.StringSliceVar(&a.federationAddresses, "agent-federation-address", nil,
		"with --agent=deployment, https:// addresses of the federation's apiservers as the member's network reaches them (default: the server of --context)")
}

// validate checks the flags of --agent=deployment, naming the flag at
// fault, and reads the values file.
func (a *agentChartOptions) validate(f *pflag.FlagSet, connection, agent string) error {
	if connection != connectionAgent || agent != agentInMember {
		var set []string
		for _, name := range agentChartFlags {
			if f.Changed(name) {
				set = append(set, "--"+name)
			}
		}
		if len(set) > 0 {
			return fmt.Errorf("%s: only for --connection=%s --agent=%s (the agent as a Deployment in the member)", strings.Join(set, ", "), connectionAgent, agentInMember)
		}
		return nil
	}
	var errs []error
	if _, _, err := hostplane.SplitImage("--agent-image", a.image); err != nil {
		errs = append(errs, err)
	}
	for _, address := range a.federationAddresses {
		if err := checkHTTPS(address); err != nil {
			errs = append(errs, fmt.Errorf("--agent-federation-address %q: %w", address, err))
		}
	}
	if a.valuesFile != "" {
		v, err := chartutil.ReadValuesFile(a.valuesFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("--agent-values: %w", err))
		}
		a.values = v
	}
	return errors.Join(errs...)
}

// checkHTTPS: address is https://HOST[:PORT][/PATH].
func checkHTTPS(address string) error {
	u, err := url.Parse(address)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return errors.New("want an https:// URL, e.g. https://federation.example.com:443")
	}
	return nil
}

// embeddedAgentChart is the agent chart built into kubefed.
func embeddedAgentChart() (*hostplane.Chart, error) {
	sub, err := fs.Sub(deploy.AgentChart, "charts/federation-agent")
	if err != nil {
		return nil, err
	}
	return hostplane.LoadChart(sub)
}

// agentFederationLabel names the federation whose agent an object of the
// agent chart is, so that one federation's unjoin never deletes another's.
const agentFederationLabel = "federation.k8s.io/agent-federation"

// agentSelector selects the objects kubefed rendered from the agent chart
// for cluster of federation in a member.
func agentSelector(federation, cluster string) string {
	return fmt.Sprintf("%s=%s,%s=%s,%s=%s,%s=%s", hostplane.LabelName, agentAppName, hostplane.LabelManagedBy, hostplane.FieldManager,
		federationv1beta1.AgentClusterLabel, cluster, agentFederationLabel, federation)
}

// chartValues are the agent chart's values: the file's, under join's own.
// memberSecret is the join account's token Secret in the member.
func (a agentSetup) chartValues(opts *agentChartOptions, memberSecret string) (map[string]any, error) {
	repository, tag, err := hostplane.SplitImage("--agent-image", opts.image)
	if err != nil {
		return nil, err
	}
	addresses := opts.federationAddresses
	if len(addresses) == 0 {
		if err := checkHTTPS(a.federation); err != nil {
			return nil, fmt.Errorf("the federation context's server %q, which the agent would dial: %w; give --agent-federation-address", a.federation, err)
		}
		addresses = []string{a.federation}
	}
	list := make([]any, len(addresses))
	for i, address := range addresses {
		list[i] = address
	}
	own := map[string]any{
		"cluster":          a.cluster,
		"federationName":   a.federationName,
		"federation":       map[string]any{"addresses": list, "ca": string(a.federationCA)},
		"bootstrapToken":   a.bootstrapToken,
		"memberCredential": map[string]any{"secretName": memberSecret},
		"image":            map[string]any{"repository": repository, "tag": tag},
	}
	if name, _ := opts.values["fullnameOverride"].(string); name != "" && strings.HasPrefix(name, accessName(a.federationName)) {
		return nil, fmt.Errorf("--agent-values: fullnameOverride %q would name the agent's objects like the join account's (%s...)", name, accessName(a.federationName))
	}
	file := map[string]any{}
	for k, v := range opts.values {
		file[k] = v
	}
	// own's values win; tables merge.
	return chartutil.CoalesceTables(own, file), nil
}

// renderAgent renders the agent chart for the member.
func (a agentSetup) renderAgent(opts *agentChartOptions, memberSecret string, member *hostplane.Host) ([]*unstructured.Unstructured, error) {
	chart, err := embeddedAgentChart()
	if err != nil {
		return nil, err
	}
	values, err := a.chartValues(opts, memberSecret)
	if err != nil {
		return nil, err
	}
	if values, err = chart.Coalesce(values); err != nil {
		return nil, fmt.Errorf("the agent chart's values: %w", err)
	}
	caps, err := hostplane.Capabilities(member.Kube.Discovery())
	if err != nil {
		return nil, fmt.Errorf("reading the member's APIs: %w", err)
	}
	objs, err := chart.Render(agentRelease, member.Namespace, values, caps)
	if err != nil {
		return nil, fmt.Errorf("the agent chart (with --agent-values): %w", err)
	}
	return objs, nil
}

// checkMember renders the agent chart and fails, before join creates
// anything, when the values are wrong or the member holds an agent's
// objects already (another federation's agent, or an unjoin's leftovers:
// their credential Secret would hold a certificate of another Cluster).
func (a agentSetup) checkMember(ctx context.Context, opts *agentChartOptions, memberSecret string) error {
	member, err := hostplane.NewHost(a.member, federationv1beta1.SystemNamespace)
	if err != nil {
		return err
	}
	a.bootstrapToken = "000000.0000000000000000" // the token's Secret is checked too
	objs, err := a.renderAgent(opts, memberSecret, member)
	if err != nil {
		return err
	}
	return refuseExisting(ctx, member, objs)
}

func refuseExisting(ctx context.Context, member *hostplane.Host, objs []*unstructured.Unstructured) error {
	existing, err := member.Existing(ctx, objs)
	if err != nil {
		return err
	}
	if len(existing) > 0 {
		return fmt.Errorf("the member's %s holds an agent's objects already (%s): another federation's agent, or left by an unjoin that could not reach the member; delete them first (kubectl --context=CONTEXT -n %s delete %s)",
			member.Namespace, strings.Join(existing, ", "), member.Namespace, strings.ToLower(strings.Join(existing, " ")))
	}
	return nil
}

// startInMember installs the agent in the member's federation-system from
// the agent chart, server-side applied, each object registered in undo;
// it refuses objects that exist already, as checkMember.
func (a agentSetup) startInMember(ctx context.Context, out io.Writer, opts *agentChartOptions, memberSecret string, undo *rollback) error {
	member, err := hostplane.NewHost(a.member, federationv1beta1.SystemNamespace)
	if err != nil {
		return err
	}
	objs, err := a.renderAgent(opts, memberSecret, member)
	if err != nil {
		return err
	}
	if err := refuseExisting(ctx, member, objs); err != nil {
		return err
	}
	for _, obj := range objs {
		if err := member.Apply(ctx, []*unstructured.Unstructured{obj}); err != nil {
			return fmt.Errorf("installing the agent in the member: %w", err)
		}
		undo.add(func() error { return member.Remove(context.Background(), obj) })
	}
	fmt.Fprintf(out, "the agent runs as Deployment %s/%s in the member (image %s)\n", member.Namespace, agentRelease, opts.image)
	return nil
}

// removeFromMember deletes the objects join rendered from the agent chart
// for cluster of federation in the member at cfg, and waits until they are
// gone.
func removeFromMember(ctx context.Context, cfg *rest.Config, federation, cluster string) ([]string, error) {
	member, err := hostplane.NewHost(cfg, federationv1beta1.SystemNamespace)
	if err != nil {
		return nil, err
	}
	deleted, err := member.DeleteSelected(ctx, agentSelector(federation, cluster), agentDeleteTimeout)
	if err != nil {
		return nil, fmt.Errorf("deleting the agent of cluster %q in the member (the objects of %s labelled %s): %w", cluster, member.Namespace, agentSelector(federation, cluster), err)
	}
	return deleted, nil
}
