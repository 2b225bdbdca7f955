package propagation

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Scenario names, as -scenarios takes them, in the order they run.
const (
	scenarioBurst       = "burst"
	scenarioDelete      = "delete"
	scenarioSteady      = "steady"
	scenarioDeployments = "deployments"
	// scenarioScale is the object-count axis (scale_test.go): its own
	// federations, of -scale-clusters members, whatever -clusters says.
	scenarioScale = "scale"
)

// allScenarios run by default, for each -clusters count.
var allScenarios = []string{scenarioBurst, scenarioDelete, scenarioSteady, scenarioDeployments}

// optionalScenarios run only when -scenarios names them.
var optionalScenarios = []string{scenarioScale, scenarioAgent, scenarioMembers}

var (
	clustersFlag  = flag.String("clusters", "1,3", "member cluster counts to run, one federation each, comma-separated (e.g. 1,3,6,10)")
	scenariosFlag = flag.String("scenarios", strings.Join(allScenarios, ","), "scenarios to run, comma-separated; delete needs burst")
	steadyFor     = flag.Duration("steady-duration", 60*time.Second, "how long the steady scenario creates (then updates) 10 objects a second")
	roundsFlag    = flag.Int("rounds", 1, "rounds of the burst and delete scenarios, each measuring the reference then the federation; the table gives medians")
	outFlag       = flag.String("out", "", "JSON file for the figures (default: propagation.json in the module's .run/bench)")
)

// Sizes of the workload.
const (
	burstObjects      = 1000
	steadyRate        = 10 // objects per second
	deployments       = 100
	deploymentReplica = 10
	payloadBytes      = 512
)

// parseCounts reads -clusters.
func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 20 {
			return nil, fmt.Errorf("-clusters %q: %q is not a cluster count from 1 to 20", s, f)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseScenarios reads -scenarios.
func parseScenarios(s string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(allScenarios, f) && !slices.Contains(optionalScenarios, f) {
			return nil, fmt.Errorf("-scenarios: unknown scenario %q (known: %v)", f, append(slices.Clone(allScenarios), optionalScenarios...))
		}
		out[f] = true
	}
	if out[scenarioDelete] && !out[scenarioBurst] {
		return nil, fmt.Errorf("-scenarios: %s deletes what %s created; run both", scenarioDelete, scenarioBurst)
	}
	return out, nil
}
