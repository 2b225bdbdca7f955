package propagation

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	scaleObjectsFlag  = flag.String("scale-objects", "10000,50000", "federated object counts of the scale scenario, one federation each, comma-separated")
	scaleClustersFlag = flag.Int("scale-clusters", 3, "member clusters of the scale scenario's federations (whatever -clusters says)")
	scaleSteadyFor    = flag.Duration("scale-steady", 20*time.Second, "how long the scale scenario's steady phases create (then update) 10 ConfigMaps a second")
	scaleWindow       = flag.Duration("scale-window", 30*time.Second, "how long the scale scenario measures the plane's CPU and memory at rest")
)

// Sizes of the scale scenario's tries.
const (
	// listTries of each LIST, watchTries of the watch delivery.
	listTries  = 5
	watchTries = 20
	// listPage is the page size of the paginated LIST.
	listPage = 500
	// afterVerified is how long writes are counted once every copy was
	// verified after the restart.
	afterVerified = 20 * time.Second
)

// parseObjectCounts reads -scale-objects.
func parseObjectCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(strings.ReplaceAll(f, "_", "")))
		if err != nil || n < 20 || n > 200_000 {
			return nil, fmt.Errorf("-scale-objects %q: %q is not an object count from 20 to 200000", s, f)
		}
		out = append(out, n)
	}
	return out, nil
}

// runScale runs the object-count axis: for each -scale-objects count, a new
// federation of -scale-clusters members, measured empty, then loaded with
// that many objects, at rest, across a restart of its controller manager,
// under a steady load and through its LIST and watch.
func runScale(b *testing.B, bin string, rep *report, out string) {
	counts, err := parseObjectCounts(*scaleObjectsFlag)
	if err != nil {
		b.Fatal(err)
	}
	eachCount(b, "objects", counts, rep, out, func(b *testing.B, _ int) *bench {
		return setUp(b, bin, *scaleClustersFlag)
	}, (*bench).scale)
}

// scale measures one federation empty, then with n objects.
func (bn *bench) scale(ctx context.Context, n int) {
	// The empty federation: what the loaded one is compared with.
	bn.quiet("the empty federation at rest")
	empty := bn.atRest()
	emptyCreate, emptyUpdate := bn.scaleSteady(ctx, "steady-empty-")
	emptyWatch := bn.watchLatency(ctx, "watch-empty-")

	objects := scaleMix(n)
	bn.scaleLoad(ctx, objects)

	bn.quiet("the loaded federation at rest")
	profiled := bn.profile(fmt.Sprintf("scale-rest-%d", n))
	loaded := bn.atRest()
	profiled()
	bn.heapProfile(fmt.Sprintf("rest-%d", n))
	bn.scaleRest(n, empty, loaded)

	bn.scaleRestart(ctx, n, empty)

	create, update := bn.scaleSteady(ctx, "steady-loaded-")
	for _, p := range []struct {
		what          string
		loaded, empty []time.Duration
	}{{"create", create, emptyCreate}, {"update", update, emptyUpdate}} {
		for _, q := range []struct {
			name string
			at   float64
		}{{"p50", 0.50}, {"p90", 0.90}, {"p99", 0.99}} {
			bn.scaleAdd(n, fmt.Sprintf("steady %s %s ms (%d objects, %s at 10/s)", p.what, q.name, len(p.loaded), *scaleSteadyFor),
				ms(quantile(p.loaded, q.at)), ms(quantile(p.empty, q.at)))
		}
	}

	bn.listLatency(ctx, n)
	watch := bn.watchLatency(ctx, "watch-loaded-")
	for _, q := range []struct {
		name string
		at   float64
	}{{"p50", 0.50}, {"p99", 0.99}} {
		bn.scaleAdd(n, fmt.Sprintf("watch delivery %s ms (create at the federation to its watch event, %d tries)", q.name, watchTries),
			ms(quantile(watch, q.at)), ms(quantile(emptyWatch, q.at)))
	}
}
