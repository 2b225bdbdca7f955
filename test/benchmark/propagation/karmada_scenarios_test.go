package propagation

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/poll"
)

// karmadaRestWindow is how long the cost scenario measures the planes at rest.
const karmadaRestWindow = 60 * time.Second

// both runs measure for the federation and then for Karmada, noting what
// the other (idle, still running) plane spent meanwhile.
func (kb *karmadaBench) both(what string, measure func(s *side)) {
	for _, s := range []*side{kb.fedSys, kb.kSys} {
		other := kb.kSys
		if s == kb.kSys {
			other = kb.fedSys
		}
		idle := startMeter(other.pids())
		measure(s)
		used, err := idle.stop()
		if err != nil {
			kb.note(fmt.Sprintf("%s, %s: measuring the idle %s: %v", what, s.name, other.name, err))
		}
		kb.note(fmt.Sprintf("%s, %s measured: the idle %s spent %.1f CPU s meanwhile", what, s.name, other.name, sideSum(used).CPUSeconds))
	}
}

// planeCost adds a scenario's CPU seconds and peak RSS of both planes.
func (kb *karmadaBench) planeCost(scenario string, used map[string]usage) {
	fed, k := sideSum(kb.usedBy(used, kb.fedSys)), sideSum(kb.usedBy(used, kb.kSys))
	kb.add(scenario, "control plane CPU s (all its processes)", fed.CPUSeconds, k.CPUSeconds)
	kb.add(scenario, "control plane peak RSS MiB (sum of its processes)", fed.PeakRSSMiB, k.PeakRSSMiB)
}

// usedBy picks one plane's processes out of a meter's readings, which are
// keyed "<plane>/<program>".
func (kb *karmadaBench) usedBy(used map[string]usage, s *side) map[string]usage {
	out := map[string]usage{}
	for name := range s.pids() {
		out[name] = used[s.name+"/"+name]
	}
	return out
}

// startPlaneMeter meters s's processes, keyed "<plane>/<program>".
func startSideMeter(s *side) *meter {
	pids := map[string]int{}
	for name, pid := range s.pids() {
		pids[s.name+"/"+name] = pid
	}
	return startMeter(pids)
}

// burstBoth creates burstObjects ConfigMaps at each plane and times until
// every copy is seen in every member, then deletes them.
func (kb *karmadaBench) burstBoth(ctx context.Context) {
	copies := len(burstNames) * len(kb.clusters)
	took := map[*side]time.Duration{}
	used := map[string]usage{}
	kb.both("burst", func(s *side) {
		o := kb.observe(s.namespace, s.selector)
		kb.quiet(s.name + "'s burst")
		m := startSideMeter(s)
		profiled := kb.profileSide(s, "burst")
		start := time.Now()
		kb.check(kb.createConfigMaps(ctx, s, burstNames, "1"))
		created := time.Since(start)
		_, last, err := o.wait(burstNames, start, present("1"), kb.karmadaTimeout(len(burstNames)), s.name+" burst")
		o.stop()
		kb.check(err)
		u, err := m.stop()
		kb.check(err)
		for k, v := range u {
			used[k] = v
		}
		took[s] = last.Sub(start)
		profiled()
		kb.note(fmt.Sprintf("burst, %s: created after %.1f s; %s; %s", s.name, created.Seconds(),
			o.spread(burstNames, start, present("1")), sideUsageNote(u)))
	})
	fed, k := took[kb.fedSys], took[kb.kSys]
	kb.add("burst", fmt.Sprintf("copies/s (%d copies)", copies), float64(copies)/fed.Seconds(), float64(copies)/k.Seconds())
	kb.add("burst", "seconds until the last copy", fed.Seconds(), k.Seconds())
	kb.planeCost("burst", used)
	for _, s := range []*side{kb.fedSys, kb.kSys} {
		kb.clear(ctx, s, burstNames)
	}
}

// steadyBoth writes steadyRate ConfigMaps a second for -steady-duration at
// each plane, then updates them, and reports per object the time from the
// plane's answer to the last member's watch event (as steady does).
func (kb *karmadaBench) steadyBoth(ctx context.Context) {
	n := max(1, int(steadyFor.Seconds()*steadyRate))
	names := objectNames("steady-", n)
	create, update := map[*side][]time.Duration{}, map[*side][]time.Duration{}
	used := map[string]usage{}
	kb.both("steady", func(s *side) {
		o := kb.observe(s.namespace, s.selector)
		kb.quiet(s.name + "'s steady writes")
		m := startSideMeter(s)
		create[s] = kb.steadyPhase(o, names, "1", steadyRate, func(i int) (time.Time, error) {
			_, err := s.client.CoreV1().ConfigMaps(s.namespace).Create(ctx, s.configMap(names[i], "1"), metav1.CreateOptions{})
			return time.Now(), err
		}, s.name+" steady create")
		update[s] = kb.steadyPhase(o, names, "2", steadyRate, func(i int) (time.Time, error) {
			_, err := s.client.CoreV1().ConfigMaps(s.namespace).Patch(ctx, names[i], types.MergePatchType, []byte(`{"data":{"version":"2"}}`), metav1.PatchOptions{})
			return time.Now(), err
		}, s.name+" steady update")
		o.stop()
		u, err := m.stop()
		kb.check(err)
		for k, v := range u {
			used[k] = v
		}
	})
	for _, p := range []struct {
		what string
		d    map[*side][]time.Duration
	}{{"create", create}, {"update", update}} {
		for _, q := range []struct {
			name string
			at   float64
		}{{"p50", 0.50}, {"p90", 0.90}, {"p99", 0.99}, {"max", 1}} {
			kb.add("steady "+p.what, q.name+" ms", ms(quantile(p.d[kb.fedSys], q.at)), ms(quantile(p.d[kb.kSys], q.at)))
		}
	}
	kb.planeCost("steady", used)
	for _, s := range []*side{kb.fedSys, kb.kSys} {
		kb.clear(ctx, s, names)
	}
}

// deploymentsBoth creates the Deployments at each plane, the replicas
// divided by the same static weights (the federation's preferences
// annotation, Karmada's PropagationPolicy), and times until each plane
// reports every Deployment's replicas ready (its status summed over the
// members), then deletes them.
func (kb *karmadaBench) deploymentsBoth(ctx context.Context) {
	kb.check(kb.createPolicy(ctx, "deployments", map[string]any{
		"resourceSelectors": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}},
		"placement": map[string]any{
			"clusterAffinity": map[string]any{"clusterNames": kb.clusterNames()},
			"replicaScheduling": map[string]any{
				"replicaSchedulingType":     "Divided",
				"replicaDivisionPreference": "Weighted",
				"weightPreference": map[string]any{"staticWeightList": []any{
					map[string]any{"targetCluster": map[string]any{"clusterNames": []any{kb.clusters[0]}}, "weight": int64(2)},
					map[string]any{"targetCluster": map[string]any{"clusterNames": kb.clusterNames()[1:]}, "weight": int64(1)},
				}},
			},
		},
	}))
	took, pods := map[*side]time.Duration{}, map[*side]int64{}
	used := map[string]usage{}
	kb.both("deployments", func(s *side) {
		var annotations map[string]string
		if s == kb.fedSys {
			annotations = map[string]string{federationv1beta1.DeploymentPreferencesAnnotation: preferences}
		}
		kb.quiet(s.name + "'s deployments")
		m := startSideMeter(s)
		profiled := kb.profileSide(s, "deployments")
		start := time.Now()
		kb.check(parallel(len(deploymentNames), fedWriters, func(i int) error {
			_, err := s.client.AppsV1().Deployments(s.namespace).Create(ctx, deployment(s.namespace, deploymentNames[i], deploymentReplica, annotations), metav1.CreateOptions{})
			return err
		}))
		kb.check(poll.Until(ctx, deploymentsTimeout, s.name+": every Deployment to report all its replicas ready", func(ctx context.Context) error {
			total, err := allDeploymentsReady(ctx, s.client, s.namespace)
			if err == nil {
				pods[s] = total
			}
			return err
		}))
		took[s] = time.Since(start)
		profiled()
		u, err := m.stop()
		kb.check(err)
		for k, v := range u {
			used[k] = v
		}
		kb.note(fmt.Sprintf("deployments, %s: %d replicas per member: %v", s.name, pods[s], kb.replicasPerMember(ctx, s)))
	})
	kb.add("deployments", fmt.Sprintf("seconds until all ready (pods: fed %d, Karmada %d)", pods[kb.fedSys], pods[kb.kSys]),
		took[kb.fedSys].Seconds(), took[kb.kSys].Seconds())
	kb.planeCost("deployments", used)
	for _, s := range []*side{kb.fedSys, kb.kSys} {
		if !kb.more {
			break
		}
		kb.check(s.client.AppsV1().Deployments(s.namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}))
		kb.check(poll.Until(ctx, deploymentsTimeout, s.name+": Deployments gone from the members", func(ctx context.Context) error {
			for _, c := range kb.clusters {
				list, err := kb.watchers[c].AppsV1().Deployments(s.namespace).List(ctx, metav1.ListOptions{})
				if err != nil {
					return err
				}
				if len(list.Items) > 0 {
					return fmt.Errorf("%d left in %s", len(list.Items), c)
				}
			}
			return nil
		}))
	}
}

// replicasPerMember sums the replicas s's Deployments run in each member.
func (kb *karmadaBench) replicasPerMember(ctx context.Context, s *side) map[string]int32 {
	out := map[string]int32{}
	for _, c := range kb.clusters {
		list, err := kb.watchers[c].AppsV1().Deployments(s.namespace).List(ctx, metav1.ListOptions{})
		kb.check(err)
		for _, d := range list.Items {
			out[c] += d.Status.ReadyReplicas
		}
	}
	return out
}

// costBoth propagates -karmada-cost-objects ConfigMaps through each plane
// and then measures both planes at rest: resident memory (before and with
// the objects) and CPU over karmadaRestWindow.
func (kb *karmadaBench) costBoth(ctx context.Context) {
	n := *karmadaCostObjects
	names := objectNames("cost-", n)
	copies := n * len(kb.clusters)
	before := map[*side]float64{}
	for _, s := range []*side{kb.fedSys, kb.kSys} {
		before[s] = kb.rssMiB(s)
	}
	took := map[*side]time.Duration{}
	kb.both("cost", func(s *side) {
		o := kb.observe(s.namespace, s.selector)
		kb.quiet(s.name + "'s objects for the cost")
		start := time.Now()
		kb.check(kb.createConfigMaps(ctx, s, names, "1"))
		_, last, err := o.wait(names, start, present("1"), kb.karmadaTimeout(n), s.name+" cost objects")
		o.stop()
		kb.check(err)
		took[s] = last.Sub(start)
	})
	kb.quiet("the planes at rest")
	fm, km := startSideMeter(kb.fedSys), startSideMeter(kb.kSys)
	time.Sleep(karmadaRestWindow) // the measurement window itself
	fu, err := fm.stop()
	kb.check(err)
	ku, err := km.stop()
	kb.check(err)
	after := map[*side]float64{kb.fedSys: kb.rssMiB(kb.fedSys), kb.kSys: kb.rssMiB(kb.kSys)}
	kb.note(fmt.Sprintf("cost at rest over %s: federation %s; Karmada %s", karmadaRestWindow, sideUsageNote(fu), sideUsageNote(ku)))
	f, k := kb.fedSys, kb.kSys
	kb.add("cost", fmt.Sprintf("seconds to propagate %d objects (%d copies)", n, copies), took[f].Seconds(), took[k].Seconds())
	kb.add("cost", "RSS MiB before the objects (sum of processes)", before[f], before[k])
	kb.add("cost", fmt.Sprintf("RSS MiB at rest with %d objects", n), after[f], after[k])
	perObject := func(s *side) float64 { return (after[s] - before[s]) * 1024 / float64(copies) }
	kb.add("cost", "KiB more RSS per object per member", perObject(f), perObject(k))
	kb.add("cost", fmt.Sprintf("CPU %% at rest with %d objects (%s window)", n, karmadaRestWindow),
		100*sideSum(fu).CPUSeconds/karmadaRestWindow.Seconds(), 100*sideSum(ku).CPUSeconds/karmadaRestWindow.Seconds())
}

// karmadaTimeout bounds the wait for copies in the comparison: Karmada
// at its default settings takes far longer than the federation, and a slow
// run is to be measured, not cut short.
func (kb *karmadaBench) karmadaTimeout(objects int) time.Duration {
	return max(20*time.Minute, time.Duration(objects*len(kb.clusters))*50*time.Millisecond)
}

// rssMiB is the current resident memory of s's processes, summed.
func (kb *karmadaBench) rssMiB(s *side) float64 {
	total := 0.0
	for name, pid := range s.pids() {
		kb_, err := statusKB(pid, "VmRSS:")
		if err != nil {
			kb.check(fmt.Errorf("%s %s: %w", s.name, name, err))
		}
		total += float64(kb_) / 1024
	}
	return total
}
