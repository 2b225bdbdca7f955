package propagation

import (
	"flag"
	"fmt"
	"slices"
	"strings"
)

// The Karmada comparison's scenarios, in the order they run.
const (
	karmadaBurst       = "burst"
	karmadaSteady      = "steady"
	karmadaDeployments = "deployments"
	karmadaCost        = "cost"
)

var allKarmadaScenarios = []string{karmadaBurst, karmadaSteady, karmadaDeployments, karmadaCost}

var (
	karmadaBinFlag       = flag.String("karmada-bin", "", "folder of Karmada's prebuilt programs (aggregated-apiserver, controller-manager, scheduler, webhook); BenchmarkKarmada is skipped without it")
	karmadaSrcFlag       = flag.String("karmada-src", "", "a Karmada source tree of the same version, for its CRDs and webhook configurations")
	karmadaScenariosFlag = flag.String("karmada-scenarios", strings.Join(allKarmadaScenarios, ","), "BenchmarkKarmada's scenarios, comma-separated")
	karmadaCMFlags       = flag.String("karmada-controller-manager-flags", "", "extra flags of karmada-controller-manager, space-separated (e.g. --kube-api-qps=400 --kube-api-burst=600)")
	karmadaSchedFlags    = flag.String("karmada-scheduler-flags", "", "extra flags of karmada-scheduler, space-separated")
	karmadaCostObjects   = flag.Int("karmada-cost-objects", 10000, "ConfigMaps at rest in the cost scenario of BenchmarkKarmada")
)

// parseKarmadaScenarios reads -karmada-scenarios.
func parseKarmadaScenarios(s string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(allKarmadaScenarios, f) {
			return nil, fmt.Errorf("-karmada-scenarios: unknown scenario %q (known: %v)", f, allKarmadaScenarios)
		}
		out[f] = true
	}
	return out, nil
}
