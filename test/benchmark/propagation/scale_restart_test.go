package propagation

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/federation-v1/federation/pkg/httpprobe"
	"github.com/federation-v1/federation/pkg/localprocess"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
	"github.com/federation-v1/federation/test/fedenv"
)

// initialPendingMetric falls to 0 once the controller manager has verified
// every copy after its start (pkg/controllers/propagation/initial.go).
const initialPendingMetric = "federation_sync_initial_pending"

// verifiedPoll is how often the restart's progress is read.
const verifiedPoll = 250 * time.Millisecond

// scaleRestart stops the controller manager, starts it again and times
// until every copy of the n objects was verified, counting its member
// writes until then and for afterVerified more.
func (bn *bench) scaleRestart(ctx context.Context, n int, empty restFigures) {
	dir := bn.u.PlaneDir(federation)
	running := localprocess.FindMentioning(dir, map[string]bool{processplane.ControllerManager: true})
	if len(running) != 1 {
		bn.b.Fatalf("restart: %d controller managers of the plane running, not one", len(running))
	}
	stopping := time.Now()
	bn.check(running[0].Stop(30 * time.Second))
	stopped := time.Since(stopping)

	plane := bn.u.Plane(federation)
	p := bn.controllerManagerProcess(strings.Fields(*controllerManagerFlags), fmt.Sprintf("controller-manager-scale-%d.log", n))
	start := time.Now()
	bn.check(p.Start(false))
	bn.b.Cleanup(func() { _ = p.Stop(5 * time.Second) })
	timeout := max(3*time.Minute, time.Duration(n)*10*time.Millisecond)
	bn.check(poll.UntilEvery(ctx, timeout, verifiedPoll, "the restarted controller manager's /healthz", func(ctx context.Context) error {
		return httpprobe.GetOK(ctx, "https://"+plane.ControllerManagerAddress+"/healthz")
	}))
	healthy := time.Since(start)
	if cm, _ := bn.planePIDs(); cm != p.Pid {
		bn.b.Fatalf("restart: the plane's controller manager is pid %d, not the one started (%d)", cm, p.Pid)
	}
	profiled := bn.profile(fmt.Sprintf("scale-restart-%d", n))

	// Every type's gauge appears once its caches synced; all of them at 0
	// is every copy verified.
	var synced time.Duration
	var body string
	bn.check(poll.UntilEvery(ctx, timeout, verifiedPoll, "every copy verified after the restart", func(context.Context) error {
		var err error
		if body, err = bn.u.ControllerManagerMetrics(federation); err != nil {
			return err
		}
		pending, err := fedenv.MetricByLabel(body, initialPendingMetric, "type", nil)
		if err != nil {
			return poll.Abort(err)
		}
		left, err := verifiedLeft(pending, scaleKinds)
		if err != nil {
			return err
		}
		if synced == 0 {
			synced = time.Since(start)
		}
		if left > 0 {
			return fmt.Errorf("%.0f objects not yet verified", left)
		}
		return nil
	}))
	verified := time.Since(start)
	writesUntil := sumMetric(bn, body, memberWritesMetric)
	cpu, err := cpuSeconds(p.Pid)
	bn.check(err)
	peak, err := statusKB(p.Pid, "VmHWM:")
	bn.check(err)
	profiled()

	time.Sleep(afterVerified) // the window writes are counted over
	body, err = bn.u.ControllerManagerMetrics(federation)
	bn.check(err)
	writesAfter := sumMetric(bn, body, memberWritesMetric) - writesUntil
	heap := sumMetric(bn, body, heapInUseMetric) / (1 << 20)
	rss, err := statusKB(p.Pid, "VmRSS:")
	bn.check(err)

	members := len(bn.clusters)
	target := "restart: seconds from the start to every copy verified"
	if n >= 50_000 {
		bn.scaleBelow(n, target, verified.Seconds(), none, targetRestartSeconds)
	} else {
		bn.scaleAdd(n, target+fmt.Sprintf(" (the target, < %.0f, is at 50,000)", targetRestartSeconds), verified.Seconds(), none)
	}
	bn.scaleZero(n, "restart: member writes until every copy was verified", writesUntil)
	bn.scaleZero(n, fmt.Sprintf("restart: member writes in the %s after", afterVerified), writesAfter)
	bn.scaleAdd(n, fmt.Sprintf("restart: controller manager RSS MiB %s after", afterVerified), float64(rss)/1024, empty.cmRSS)
	bn.scaleBelow(n, "restart: the same, KiB per object per member", kibPerCopy(float64(rss)/1024, n, members), none, targetKiBPerCopy)
	bn.scaleAdd(n, fmt.Sprintf("restart: controller manager Go heap in use MiB %s after", afterVerified), heap, empty.cmHeap)
	bn.scaleNote(fmt.Sprintf("scale, %d objects, restart: the controller manager stopped in %.1f s; the new one served /healthz after %.1f s, "+
		"had its caches synced (every type's gauge served) after %.1f s and every copy verified after %.1f s, having used %.1f CPU s "+
		"and at most %.0f MiB", n, stopped.Seconds(), healthy.Seconds(), synced.Seconds(), verified.Seconds(), cpu, float64(peak)/1024))
}

// verifiedLeft sums the objects left to verify, once every one of kinds
// has its gauge (its controller's caches synced).
func verifiedLeft(pending map[string]float64, kinds []string) (float64, error) {
	for _, k := range kinds {
		if _, ok := pending[k]; !ok {
			return 0, fmt.Errorf("no %s{type=%q} yet: its caches have not synced", initialPendingMetric, k)
		}
	}
	left := 0.0
	for _, v := range pending {
		left += v
	}
	return left, nil
}
