package propagation

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// Label selectors of the members' copies: the federation's, the reference's.
var (
	fedSelector = federationv1beta1.FederationLabel + "=" + federation
	refSelector = refLabel + "=true"
)

// burstNames are the ConfigMaps of the burst and deletion scenarios.
var burstNames = objectNames("burst-", burstObjects)

// convergeTimeout bounds the wait for copies: generous, so that a slow
// run is measured rather than cut short.
func (bn *bench) convergeTimeout(objects int) time.Duration {
	return max(3*time.Minute, time.Duration(objects*len(bn.clusters))*30*time.Millisecond)
}

// burst creates burstObjects ConfigMaps and times until every copy exists,
// first straight to the members (the reference), then at the federation,
// then measures the round's limit (see burstLimit).
func (bn *bench) burst(ctx context.Context) {
	copies := len(burstNames) * len(bn.clusters)
	fedTook, refTook := bn.burstPair(ctx, scenarioBurst)
	bn.add(scenarioBurst, fmt.Sprintf("copies/s (%d copies)", copies), float64(copies)/fedTook.Seconds(), float64(copies)/refTook.Seconds())
	bn.add(scenarioBurst, "seconds until the last copy", fedTook.Seconds(), refTook.Seconds())

	limitTook := bn.burstLimit(ctx)
	bn.add(scenarioBurstLimit, fmt.Sprintf("copies/s (%d copies)", copies), float64(copies)/limitTook.Seconds(), float64(copies)/refTook.Seconds())
}

// burstPair creates the burst's ConfigMaps straight in the members, then
// at the federation, and returns how long each took until its last copy;
// the plane's cost goes in the report under scenario.
func (bn *bench) burstPair(ctx context.Context, scenario string) (fedTook, refTook time.Duration) {
	copies := len(burstNames) * len(bn.clusters)
	files := strings.ReplaceAll(scenario, " ", "-") // the profiles' names
	ref := bn.observe(refNamespace, refSelector)
	bn.quiet("the reference's burst")
	self := startMeter(map[string]int{"benchmark": os.Getpid()})
	machine, members := startMachineMeter(), startGroupMeter(bn.memberPrograms)
	memberProfiled := bn.profileMember(files + "-reference")
	start := time.Now()
	err := bn.refEverywhere(len(burstNames), func(c string, i int) error {
		return bn.refApply(ctx, c, configMapsResource, refConfigMap(burstNames[i], "1"))
	})
	bn.check(err)
	_, last, err := ref.wait(burstNames, start, present("1"), bn.convergeTimeout(len(burstNames)), "reference burst")
	ref.stop()
	bn.check(err)
	refTook = last.Sub(start)
	refCPU := bn.selfCPU(self)
	bn.note(fmt.Sprintf("%s N=%d, reference: %s; the benchmark process (the reference's writes and the watches) used %.1f CPU s; members: %s; %s",
		scenario, len(bn.clusters), ref.spread(burstNames, start, present("1")), refCPU, members, machine))
	memberProfiled()

	fed := bn.observe(fedNamespace, fedSelector)
	bn.quiet("the federation's burst")
	m := bn.meter()
	self = startMeter(map[string]int{"benchmark": os.Getpid()})
	profiled := bn.profile(files)
	machine, members = startMachineMeter(), startGroupMeter(bn.memberPrograms)
	memberProfiled = bn.profileMember(files + "-federation")
	start = time.Now()
	bn.check(bn.createAtFederation(ctx, burstNames, "1"))
	created := time.Since(start)
	_, last, err = fed.wait(burstNames, start, present("1"), bn.convergeTimeout(len(burstNames)), "federation burst")
	fed.stop()
	bn.check(err)
	fedTook = last.Sub(start)
	bn.note(fmt.Sprintf("%s N=%d, federation: created at the federation after %.1f s; %s; the benchmark process (its creates and the watches) used %.1f CPU s; members: %s; %s",
		scenario, len(bn.clusters), created.Seconds(), fed.spread(burstNames, start, present("1")), bn.selfCPU(self), members, machine))
	bn.cost(scenario, copies, m)
	memberProfiled()
	profiled()
	return fedTook, refTook
}

// deletion deletes the burst's ConfigMaps and times until every copy is
// gone; record says whether its figures go in the report.
func (bn *bench) deletion(ctx context.Context, record bool) {
	copies := len(burstNames) * len(bn.clusters)
	ref := bn.observe(refNamespace, refSelector)
	bn.quiet("the reference's deletion")
	start := time.Now()
	err := bn.refEverywhere(len(burstNames), func(c string, i int) error {
		return bn.refDelete(ctx, c, configMapsResource, burstNames[i])
	})
	bn.check(err)
	_, last, err := ref.wait(burstNames, start, gone, bn.convergeTimeout(len(burstNames)), "reference deletion")
	ref.stop()
	bn.check(err)
	refTook := last.Sub(start)

	fed := bn.observe(fedNamespace, fedSelector)
	bn.quiet("the federation's deletion")
	m := bn.meter()
	profiled := func() {}
	if record {
		profiled = bn.profile(scenarioDelete)
	}
	start = time.Now()
	bn.check(bn.deleteAtFederation(ctx, burstNames))
	_, last, err = fed.wait(burstNames, start, gone, bn.convergeTimeout(len(burstNames)), "federation deletion")
	fed.stop()
	bn.check(err)
	fedTook := last.Sub(start)
	profiled()
	if !record {
		_, _ = m.stop()
		return
	}
	bn.cost(scenarioDelete, copies, m)
	bn.add(scenarioDelete, fmt.Sprintf("copies/s (%d copies)", copies), float64(copies)/fedTook.Seconds(), float64(copies)/refTook.Seconds())
	bn.add(scenarioDelete, "seconds until the last copy is gone", fedTook.Seconds(), refTook.Seconds())
}

// steady creates rate ConfigMaps a second for d, then updates each at the
// same rate, and reports per object the time from the write to the last
// member's watch event: at the federation from its response, for the
// reference from the start of its writes to the members. It returns the
// federation's latencies.
func (bn *bench) steady(ctx context.Context, d time.Duration, rate int) (create, update []time.Duration) {
	n := max(1, int(d.Seconds()*float64(rate)))
	names := objectNames("steady-", n)
	copies := 2 * n * len(bn.clusters)

	ref := bn.observe(refNamespace, refSelector)
	refWrite := func(version string) func(i int) (time.Time, error) {
		return func(i int) (time.Time, error) {
			start := time.Now()
			errs := make(chan error, len(bn.clusters))
			for _, c := range bn.clusters {
				go func() { errs <- bn.refApply(ctx, c, configMapsResource, refConfigMap(names[i], version)) }()
			}
			for range bn.clusters {
				if err := <-errs; err != nil {
					return start, err
				}
			}
			return start, nil
		}
	}
	refCreate := bn.steadyPhase(ref, names, "1", rate, refWrite("1"), "reference steady create")
	refUpdate := bn.steadyPhase(ref, names, "2", rate, refWrite("2"), "reference steady update")
	ref.stop()

	fed := bn.observe(fedNamespace, fedSelector)
	m := bn.meter()
	fedCreate := bn.steadyPhase(fed, names, "1", rate, func(i int) (time.Time, error) {
		_, err := bn.fed.CoreV1().ConfigMaps(fedNamespace).Create(ctx, fedConfigMap(names[i], "1"), metav1.CreateOptions{})
		return time.Now(), err
	}, "federation steady create")
	fedUpdate := bn.steadyPhase(fed, names, "2", rate, func(i int) (time.Time, error) {
		_, err := bn.fed.CoreV1().ConfigMaps(fedNamespace).Patch(ctx, names[i], types.MergePatchType, []byte(`{"data":{"version":"2"}}`), metav1.PatchOptions{})
		return time.Now(), err
	}, "federation steady update")
	fed.stop()
	bn.cost(scenarioSteady, copies, m)

	for _, p := range []struct {
		what     string
		fed, ref []time.Duration
	}{{"create", fedCreate, refCreate}, {"update", fedUpdate, refUpdate}} {
		for _, q := range []struct {
			name string
			at   float64
		}{{"p50", 0.50}, {"p90", 0.90}, {"p99", 0.99}, {"max", 1}} {
			bn.add(scenarioSteady+" "+p.what, q.name+" ms", ms(quantile(p.fed, q.at)), ms(quantile(p.ref, q.at)))
		}
	}
	return fedCreate, fedUpdate
}

// steadyPhase writes the objects at rate a second and returns each one's
// latency to the last member.
func (bn *bench) steadyPhase(o *observer, names []string, version string, rate int, write func(i int) (time.Time, error), what string) []time.Duration {
	start := time.Now()
	sent, err := paced(len(names), rate, write)
	bn.check(err)
	got, _, err := o.wait(names, start, present(version), bn.convergeTimeout(len(names)), what)
	bn.check(err)
	out := make([]time.Duration, len(names))
	for i, name := range names {
		out[i] = max(0, got[name].Sub(sent[i]))
	}
	return out
}

// quantile of the latencies (q = 1 is the maximum).
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*q))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// selfCPU is the CPU seconds this process used since m started.
func (bn *bench) selfCPU(m *meter) float64 {
	used, err := m.stop()
	if err != nil {
		bn.note(fmt.Sprintf("measuring the benchmark's own CPU: %v", err))
	}
	return used["benchmark"].CPUSeconds
}
