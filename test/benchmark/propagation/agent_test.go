package propagation

import (
	"context"
	"fmt"
	"time"

	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// scenarioAgent is the agent member beside a pushed one (docs/performance.md,
// "Agent members"): a federation of two members, cluster1 dialled by the
// controller manager and cluster2 reached through its agent's tunnel, both
// fed by the same writes. Its rows compare the agent member (the
// "federation" column) with the pushed member (the "reference" column).
const scenarioAgent = "agent"

// The members of the agent scenario.
const (
	pushedMember = "cluster1"
	agentMember  = "cluster2"
)

// runAgent measures what the tunnel costs: a burst of burstObjects
// ConfigMaps, then steady creates, timed to each member separately.
func runAgent(b *testing.B, bin string, rep *report) {
	start := time.Now()
	bn := setUpWith(b, bin, 2, map[string][]string{agentMember: {"--connection=agent", "--agent=local"}})
	bn.rep = rep
	bn.withControllerManagerFlags()
	ctx := context.Background()

	o := bn.observe(fedNamespace, fedSelector)
	bn.quiet("the agent scenario's burst")
	burstStart := time.Now()
	bn.check(bn.createAtFederation(ctx, burstNames, "1"))
	_, _, err := o.wait(burstNames, burstStart, present("1"), bn.convergeTimeout(len(burstNames)), "agent burst")
	bn.check(err)
	took := map[string]time.Duration{}
	for _, c := range bn.clusters {
		took[c] = o.lastIn(c, burstNames, burstStart, present("1")).Sub(burstStart)
	}
	copies := float64(len(burstNames))
	bn.add(scenarioAgent+" burst", fmt.Sprintf("copies/s to the member (%d copies each)", len(burstNames)),
		copies/took[agentMember].Seconds(), copies/took[pushedMember].Seconds())
	bn.note(fmt.Sprintf("agent burst: %s", o.spread(burstNames, burstStart, present("1"))))

	n := max(1, int(steadyFor.Seconds()*steadyRate))
	names := objectNames("agent-steady-", n)
	steadyStart := time.Now()
	sent, err := paced(n, steadyRate, func(i int) (time.Time, error) {
		_, err := bn.fed.CoreV1().ConfigMaps(fedNamespace).Create(ctx, fedConfigMap(names[i], "1"), metav1.CreateOptions{})
		return time.Now(), err
	})
	bn.check(err)
	_, _, err = o.wait(names, steadyStart, present("1"), bn.convergeTimeout(n), "agent steady create")
	bn.check(err)
	o.stop()
	latency := map[string][]time.Duration{}
	for _, c := range bn.clusters {
		for i, name := range names {
			latency[c] = append(latency[c], max(0, o.firstIn(c, name, steadyStart, present("1")).Sub(sent[i])))
		}
	}
	for _, q := range []struct {
		name string
		at   float64
	}{{"p50", 0.50}, {"p99", 0.99}} {
		bn.add(scenarioAgent+" steady create", q.name+" ms to the member",
			ms(quantile(latency[agentMember], q.at)), ms(quantile(latency[pushedMember], q.at)))
	}
	fmt.Printf("agent: done in %s\n", time.Since(start).Round(time.Second))
}

// firstIn is when cluster first reported cond of name at or after since
// (zero if never).
func (o *observer) firstIn(cluster, name string, since time.Time, cond condition) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range o.log[cluster][name] {
		if !e.at.Before(since) && cond(e) {
			return e.at
		}
	}
	return time.Time{}
}

// lastIn is when the last of names first reported cond in cluster.
func (o *observer) lastIn(cluster string, names []string, since time.Time, cond condition) time.Time {
	var last time.Time
	for _, name := range names {
		if at := o.firstIn(cluster, name, since, cond); at.After(last) {
			last = at
		}
	}
	return last
}
