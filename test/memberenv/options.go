package memberenv

import (
	"fmt"
	"strings"
)

// ClusterSpec describes one member cluster.
type ClusterSpec struct {
	// Name is the cluster's name and its kubeconfig context (cluster1, cluster2, ...).
	Name string `json:"name"`
	// Region is the value of the region labels of every node.
	Region string `json:"region"`
	// Zones are spread round-robin over the nodes, so a cluster can span zones.
	Zones []string `json:"zones"`
	// Nodes is how many kwok nodes the cluster has.
	Nodes int `json:"nodes"`
	// RuntimeConfig is kube-apiserver's --runtime-config, to make a member
	// that lacks an API (say "autoscaling/v1=false,autoscaling/v2=false").
	RuntimeConfig string `json:"runtimeConfig,omitempty"`
	// APIOnly members run a kube-apiserver and a kube-controller-manager
	// with the service-account token controller alone (kubefed join's
	// credential is a token Secret it fills): no nodes, scheduler, kwok or
	// load balancer. They serve ConfigMaps, Secrets and Namespaces at a
	// fraction of a full member's cost, so that 50 fit on one machine (the
	// member-count benchmark); Nodes must be 0.
	APIOnly bool `json:"apiOnly,omitempty"`
}

// Options configure a new Environment.
type Options struct {
	// Dir is the run folder: certificates, kubeconfigs, logs and state.
	Dir string
	// Clusters are the members to start.
	Clusters []ClusterSpec
	// Detached processes outlive the process that started them (make up);
	// otherwise they are killed when it exits, even when it crashes (tests).
	Detached bool
	// Logf reports progress; nil is silent.
	Logf func(format string, args ...any)
}

// defaultTopology gives three clusters two regions and three zones, and
// further clusters further regions, so that DNS fallback can be tested.
var defaultTopology = []struct{ region, zone string }{
	{"us-east1", "us-east1-b"},
	{"us-east1", "us-east1-c"},
	{"europe-west1", "europe-west1-b"},
	{"asia-east1", "asia-east1-a"},
	{"us-west1", "us-west1-a"},
}

// DefaultClusters returns n cluster specs named cluster1..clusterN with the
// given number of nodes each, placed in the default regions and zones.
func DefaultClusters(n, nodes int) []ClusterSpec {
	specs := make([]ClusterSpec, 0, n)
	for i := 0; i < n; i++ {
		t := defaultTopology[i%len(defaultTopology)]
		region, zone := t.region, t.zone
		if round := i / len(defaultTopology); round > 0 {
			// Past the table, invent regions so that every cluster stays distinct.
			region = fmt.Sprintf("%s-%d", t.region, round+1)
			zone = region + strings.TrimPrefix(t.zone, t.region)
		}
		specs = append(specs, ClusterSpec{
			Name:   fmt.Sprintf("cluster%d", i+1),
			Region: region,
			Zones:  []string{zone},
			Nodes:  nodes,
		})
	}
	return specs
}

// APIOnlyClusters returns n API-only cluster specs (see ClusterSpec.APIOnly)
// named cluster1..clusterN, placed as DefaultClusters places them.
func APIOnlyClusters(n int) []ClusterSpec {
	specs := DefaultClusters(n, 0)
	for i := range specs {
		specs[i].APIOnly = true
	}
	return specs
}

// ApplyTopology overrides the region and zones of named clusters from strings
// of the form "cluster2=europe-west1:europe-west1-b,europe-west1-c".
func ApplyTopology(specs []ClusterSpec, overrides []string) error {
	for _, o := range overrides {
		name, placement, ok := strings.Cut(o, "=")
		region, zones, ok2 := strings.Cut(placement, ":")
		if !ok || !ok2 || name == "" || region == "" || zones == "" {
			return fmt.Errorf("topology %q: want CLUSTER=REGION:ZONE[,ZONE...]", o)
		}
		i := indexOf(specs, name)
		if i < 0 {
			return fmt.Errorf("topology %q: no cluster named %q", o, name)
		}
		specs[i].Region = region
		specs[i].Zones = strings.Split(zones, ",")
	}
	return nil
}

func indexOf(specs []ClusterSpec, name string) int {
	for i := range specs {
		if specs[i].Name == name {
			return i
		}
	}
	return -1
}

func (o *Options) validate() error {
	if o.Dir == "" {
		return fmt.Errorf("memberenv: Options.Dir is empty")
	}
	if len(o.Clusters) == 0 {
		return fmt.Errorf("memberenv: no clusters to start")
	}
	seen := map[string]bool{}
	for _, c := range o.Clusters {
		switch {
		case c.Name == "":
			return fmt.Errorf("memberenv: a cluster has no name")
		case seen[c.Name]:
			return fmt.Errorf("memberenv: cluster %q is listed twice", c.Name)
		case c.APIOnly && c.Nodes != 0:
			return fmt.Errorf("memberenv: cluster %q is API-only and cannot have nodes, got %d", c.Name, c.Nodes)
		case !c.APIOnly && c.Nodes < 1:
			return fmt.Errorf("memberenv: cluster %q needs at least one node, got %d", c.Name, c.Nodes)
		case c.Region == "" || len(c.Zones) == 0:
			return fmt.Errorf("memberenv: cluster %q needs a region and at least one zone", c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

func (o *Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}
