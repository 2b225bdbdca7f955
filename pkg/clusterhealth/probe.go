// Package clusterhealth observes a member cluster the way Federation v1's
// cluster controller did, with today's endpoints: is its API reachable and
// ready (/readyz), and which zones and region do its nodes carry. A Tracker
// turns a run of observations into a verdict that one lost probe does not flip.
package clusterhealth

import (
	"context"
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// Node labels that carry topology: today's, then the ones v1 read.
var (
	zoneLabels   = []string{"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}
	regionLabels = []string{"topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region"}
)

// nodePageSize bounds each list call, so a large member costs several small
// responses rather than one huge one.
const nodePageSize = 500

// Observation is the result of one probe.
type Observation struct {
	// Reachable: the API server answered at all.
	Reachable bool
	// Healthy: it answered /readyz with ok.
	Healthy bool
	// Message says what failed, for the condition's message.
	Message string
	// Zones are the distinct zone labels of the nodes, sorted.
	Zones []string
	// Region is the most common region label of the nodes.
	Region string
}

// Probe asks the member at config for /readyz and, when healthy, lists its
// nodes' metadata (labels only) for zones and region. It never takes longer
// than timeout.
func Probe(ctx context.Context, config *rest.Config, timeout time.Duration) Observation {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	config = rest.CopyConfig(config)
	config.Timeout = timeout

	client, err := rest.UnversionedRESTClientFor(withCodecs(config))
	if err != nil {
		return Observation{Message: fmt.Sprintf("building a client: %v", err)}
	}
	var status int
	body, err := client.Get().AbsPath("/readyz").Do(ctx).StatusCode(&status).Raw()
	switch {
	case err != nil && status == 0:
		return Observation{Message: fmt.Sprintf("API server unreachable: %v", err)}
	case err != nil || string(body) != "ok":
		return Observation{Reachable: true, Message: fmt.Sprintf("/readyz answered %d: %s", status, truncate(string(body), 300))}
	}
	obs := Observation{Reachable: true, Healthy: true}
	obs.Zones, obs.Region, err = topology(ctx, config)
	if err != nil {
		// Healthy but its nodes cannot be read: keep it usable, and say why
		// zones are missing.
		obs.Message = fmt.Sprintf("reading node topology: %v", err)
	}
	return obs
}

// topology pages through the nodes' metadata.
func topology(ctx context.Context, config *rest.Config) ([]string, string, error) {
	client, err := metadata.NewForConfig(config)
	if err != nil {
		return nil, "", err
	}
	nodes := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "nodes"})
	zones := map[string]bool{}
	regions := map[string]int{}
	opts := metav1.ListOptions{Limit: nodePageSize}
	for {
		page, err := nodes.List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		for _, n := range page.Items {
			if z := firstLabel(n.Labels, zoneLabels); z != "" {
				zones[z] = true
			}
			if r := firstLabel(n.Labels, regionLabels); r != "" {
				regions[r]++
			}
		}
		if opts.Continue = page.Continue; opts.Continue == "" {
			break
		}
	}
	return sortedKeys(zones), mostCommon(regions), nil
}

func firstLabel(labels map[string]string, keys []string) string {
	for _, k := range keys {
		if v := labels[k]; v != "" {
			return v
		}
	}
	return ""
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// mostCommon returns the key with the highest count, the smallest name on a tie.
func mostCommon(counts map[string]int) string {
	best := ""
	for k, n := range counts {
		if best == "" || n > counts[best] || (n == counts[best] && k < best) {
			best = k
		}
	}
	return best
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
