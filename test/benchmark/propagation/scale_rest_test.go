package propagation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/federation-v1/federation/pkg/processplane"
	"github.com/federation-v1/federation/test/fedenv"
)

// Metrics of the controller manager: its writes to members, its Go heap.
const (
	memberWritesMetric = "federation_sync_member_writes_total"
	heapInUseMetric    = "go_memstats_heap_inuse_bytes"
	goroutinesMetric   = "go_goroutines"
)

// restFigures are what the plane's programs used over a window at rest.
type restFigures struct {
	// cpu is CPU seconds per second of the window; rss the resident
	// memory at its end, peak the highest over it, in MiB.
	cmCPU, cmRSS, cmPeak    float64
	apiCPU, apiRSS, apiPeak float64
	// cmHeap is the controller manager's Go heap in use at the end, MiB:
	// what its objects take, without the garbage and spare room a
	// garbage-collected heap keeps in its RSS.
	cmHeap float64
	// writes are the controller manager's member writes in the window.
	writes float64
	// goroutines are the controller manager's at the end; memberConns its
	// TCP connections to the members' kube-apiservers.
	goroutines, memberConns float64
}

// atRest measures the controller manager and the federation apiserver over
// -scale-window.
func (bn *bench) atRest() restFigures {
	cm, api := bn.planePIDs()
	before := bn.memberWrites()
	m := bn.meter()
	start := time.Now()
	time.Sleep(*scaleWindow) // the measurement window
	used, err := m.stop()
	bn.check(err)
	window := time.Since(start).Seconds()
	cmRSS, err := statusKB(cm, "VmRSS:")
	bn.check(err)
	apiRSS, err := statusKB(api, "VmRSS:")
	bn.check(err)
	body, err := bn.u.ControllerManagerMetrics(federation)
	bn.check(err)
	conns, err := connectionsTo(cm, bn.memberAPIPorts())
	bn.check(err)
	return restFigures{
		goroutines: sumMetric(bn, body, goroutinesMetric), memberConns: float64(conns),
		cmHeap: sumMetric(bn, body, heapInUseMetric) / (1 << 20),
		cmCPU:  used[processplane.ControllerManager].CPUSeconds / window, cmRSS: float64(cmRSS) / 1024, cmPeak: used[processplane.ControllerManager].PeakRSSMiB,
		apiCPU: used[processplane.APIServer].CPUSeconds / window, apiRSS: float64(apiRSS) / 1024, apiPeak: used[processplane.APIServer].PeakRSSMiB,
		writes: sumMetric(bn, body, memberWritesMetric) - before,
	}
}

// scaleRest records the figures at rest of n objects against the empty
// federation's.
func (bn *bench) scaleRest(n int, empty, loaded restFigures) {
	members := len(bn.clusters)
	w := *scaleWindow
	bn.scaleAdd(n, fmt.Sprintf("at rest: controller manager CPU %% (over %s)", w), 100*loaded.cmCPU, 100*empty.cmCPU)
	bn.scaleAdd(n, "at rest: controller manager RSS MiB", loaded.cmRSS, empty.cmRSS)
	bn.scaleBelow(n, fmt.Sprintf("at rest: controller manager RSS KiB per object per member (RSS ÷ (%d × %d))", n, members),
		kibPerCopy(loaded.cmRSS, n, members), none, targetKiBPerCopy)
	bn.scaleAdd(n, "at rest: the same, less the empty federation's RSS", kibPerCopy(loaded.cmRSS-empty.cmRSS, n, members), none)
	bn.scaleAdd(n, "at rest: controller manager Go heap in use MiB", loaded.cmHeap, empty.cmHeap)
	bn.scaleAdd(n, "at rest: the heap in use less the empty federation's, KiB per object per member", kibPerCopy(loaded.cmHeap-empty.cmHeap, n, members), none)
	bn.scaleAdd(n, fmt.Sprintf("at rest: federation apiserver CPU %% (over %s)", w), 100*loaded.apiCPU, 100*empty.apiCPU)
	bn.scaleAdd(n, "at rest: federation apiserver RSS MiB", loaded.apiRSS, empty.apiRSS)
	bn.scaleAdd(n, "at rest: federation apiserver RSS KiB per object", loaded.apiRSS*1024/float64(n), none)
	bn.scaleZero(n, fmt.Sprintf("at rest: member writes (over %s)", w), loaded.writes)
	bn.scaleNote(fmt.Sprintf("scale, %d objects: peak RSS over the window at rest: controller manager %.0f MiB (empty %.0f), federation apiserver %.0f MiB (empty %.0f); member writes of the empty federation at rest: %.0f",
		n, loaded.cmPeak, empty.cmPeak, loaded.apiPeak, empty.apiPeak, empty.writes))
}

// memberWrites is the controller manager's member writes so far.
func (bn *bench) memberWrites() float64 {
	body, err := bn.u.ControllerManagerMetrics(federation)
	bn.check(err)
	return sumMetric(bn, body, memberWritesMetric)
}

// sumMetric sums every series of a metric.
func sumMetric(bn *bench, body, name string) float64 {
	byType, err := fedenv.MetricByLabel(body, name, "", nil)
	bn.check(err)
	total := 0.0
	for _, v := range byType {
		total += v
	}
	return total
}

// heapProfile saves the heap profiles of the controller manager and of
// the federation apiserver when -profile-dir is set.
func (bn *bench) heapProfile(name string) {
	if *profileDir == "" {
		return
	}
	client, base, err := bn.u.Plane(federation).ControllerManagerClient()
	bn.check(err)
	bn.check(os.MkdirAll(*profileDir, 0o755))
	path := filepath.Join(*profileDir, fmt.Sprintf("controller-manager-heap-%s.pprof", name))
	bn.check(saveGet(client, base+"/debug/pprof/heap", path))
	// The federation apiserver serves /debug/pprof/ to its admin.
	raw, err := bn.fed.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/heap").DoRaw(context.Background())
	bn.check(err)
	apiPath := filepath.Join(*profileDir, fmt.Sprintf("federation-apiserver-heap-%s.pprof", name))
	bn.check(os.WriteFile(apiPath, raw, 0o644))
	fmt.Printf("heap profiles in %s and %s\n", path, apiPath)
}
