package propagation

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/memberenv"
)

// scenarioMembers is the member-count axis (docs/performance.md, "Members"):
// for each -members count, a new federation of that many API-only members
// (memberenv.ClusterSpec.APIOnly), measured at rest with no member, with
// the members and no object, and with burstObjects objects; a burst to
// every member against writing the copies straight to them; steady writes
// to the last member; a member back after -members-away; and
// -members-join more members joined while at that count.
const scenarioMembers = "members"

var (
	membersFlag       = flag.String("members", "10,25,50", "member counts of the members scenario, one federation each, comma-separated")
	membersJoinFlag   = flag.Int("members-join", 10, "members the members scenario joins while at each count")
	membersAwayFlag   = flag.Duration("members-away", 60*time.Second, "how long the members scenario keeps one member away")
	membersSteadyFlag = flag.Duration("members-steady", 20*time.Second, "how long the members scenario's steady phases create (then update) ConfigMaps")
	membersCopiesFlag = flag.Int("members-steady-copies", 100, "copies a second the members scenario's steady phases ask of the members: ConfigMaps a second = this ÷ members, at least 1")
)

// maxMembers is the most members one run starts (count plus those joined
// later): memberenv's address plan allows 90, this machine's memory about 60.
const maxMembers = 70

// Targets of the member-count axis (issue 35).
const (
	// targetMiBPerMember bounds the controller manager's resident memory
	// per member at rest, besides what its copies take.
	targetMiBPerMember = 5.0
	// targetCPUPerMember bounds its CPU at rest per member, % of a core.
	targetCPUPerMember = 0.1
	// targetSteadyP99 bounds the steady p99 to the last member, ms.
	targetSteadyP99 = 2000.0
	// targetBurstRatio is the least burst throughput against the direct
	// writes.
	targetBurstRatio = 0.8
)

// parseMemberCounts reads -members.
func parseMemberCounts(s string, joinLater int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n+joinLater > maxMembers {
			return nil, fmt.Errorf("-members %q: %q is not a member count from 1 to %d (%d more join later)", s, f, maxMembers-joinLater, joinLater)
		}
		out = append(out, n)
	}
	return out, nil
}

// steadyObjectsPerSecond is the steady phases' rate: copies a second
// spread over the members, at least one object a second.
func steadyObjectsPerSecond(copies, members int) int {
	return max(1, copies/max(members, 1))
}

// runMembers runs the member-count axis.
func runMembers(b *testing.B, bin string, rep *report, out string) {
	if *membersJoinFlag < 0 {
		b.Fatalf("-members-join %d: not a count", *membersJoinFlag)
	}
	counts, err := parseMemberCounts(*membersFlag, *membersJoinFlag)
	if err != nil {
		b.Fatal(err)
	}
	eachCount(b, "members", counts, rep, out, func(b *testing.B, n int) *bench {
		return startFederation(b, bin, memberenv.APIOnlyClusters(n+*membersJoinFlag))
	}, (*bench).members)
}

// members measures one federation of n members.
func (bn *bench) members(ctx context.Context, n int) {
	bn.quiet("the federation with no member at rest")
	none := bn.atRest()

	start := time.Now()
	bn.join(bn.names(0, n), nil)
	bn.membersAdd(n, fmt.Sprintf("seconds to join %d members (kubefed join, %d at a time) until all are Ready", n, joinersAtOnce), time.Since(start).Seconds())
	bn.namespaces()

	bn.quiet("the empty federation at rest")
	empty := bn.atRest()
	bn.membersRest(n, "no object", none, empty)
	bn.membersBelow(n, "at rest, no object: controller manager RSS MiB per member ((RSS − RSS with no member) ÷ N)",
		(empty.cmRSS-none.cmRSS)/float64(n), targetMiBPerMember)
	bn.membersBelow(n, "at rest, no object: controller manager CPU % of a core per member",
		100*(empty.cmCPU-none.cmCPU)/float64(n), targetCPUPerMember)

	fedTook, refTook := bn.burstPair(ctx, scenarioMembers+" burst")
	copies := float64(len(burstNames) * n)
	bn.add(scenarioMembers+" burst", fmt.Sprintf("copies/s (%d copies)", int(copies)), copies/fedTook.Seconds(), copies/refTook.Seconds())
	ratio := refTook.Seconds() / fedTook.Seconds()
	met := ratio >= targetBurstRatio
	bn.membersRecord(memberRow{Members: n, Figure: fmt.Sprintf("burst of %d ConfigMaps to every member: copies/s against writing them straight to the members", len(burstNames)),
		Value: ratio, Target: "≥ " + num(targetBurstRatio), Met: &met})

	bn.quiet("the loaded federation at rest")
	profiled := bn.profile(fmt.Sprintf("members-rest-%d", n))
	loaded := bn.atRest()
	profiled()
	bn.heapProfile(fmt.Sprintf("members-rest-%d", n))
	bn.membersRest(n, fmt.Sprintf("%d objects", len(burstNames)), none, loaded)
	bn.membersAdd(n, fmt.Sprintf("at rest, %d objects: controller manager KiB per copy ((RSS − RSS with no object) ÷ copies)", len(burstNames)),
		kibPerCopy(loaded.cmRSS-empty.cmRSS, len(burstNames), n))

	// A load the members can take at every N: at 10 objects a second, 50
	// members are asked 500 copies a second, twice what this machine's 50
	// members took in the burst when written to straight.
	rate := steadyObjectsPerSecond(*membersCopiesFlag, n)
	create, update := bn.steady(ctx, *membersSteadyFlag, rate)
	for _, p := range []struct {
		what string
		d    []time.Duration
	}{{"create", create}, {"update", update}} {
		bn.membersBelow(n, fmt.Sprintf("steady %s p99 ms to the last member (%d objects at %d/s)", p.what, len(p.d), rate),
			ms(quantile(p.d, 0.99)), targetSteadyP99)
	}

	bn.memberAway(ctx, n)
	if *membersJoinFlag > 0 {
		bn.joinMore(ctx, n)
	}
}

// membersRest records the figures at rest of the n members' federation,
// what the federation with no member measured beside them.
func (bn *bench) membersRest(n int, what string, none, at restFigures) {
	w := *scaleWindow
	bn.membersAdd(n, fmt.Sprintf("at rest, %s: controller manager RSS MiB (no member: %.0f)", what, none.cmRSS), at.cmRSS)
	bn.membersAdd(n, fmt.Sprintf("at rest, %s: controller manager Go heap in use MiB (no member: %.0f)", what, none.cmHeap), at.cmHeap)
	bn.membersAdd(n, fmt.Sprintf("at rest, %s: controller manager goroutines (no member: %.0f)", what, none.goroutines), at.goroutines)
	bn.membersAdd(n, fmt.Sprintf("at rest, %s: controller manager goroutines per member", what), (at.goroutines-none.goroutines)/float64(n))
	bn.membersAdd(n, fmt.Sprintf("at rest, %s: controller manager connections to the members", what), at.memberConns)
	bn.membersAdd(n, fmt.Sprintf("at rest, %s: controller manager CPU %% of a core (over %s; no member: %.2f)", what, w, 100*none.cmCPU), 100*at.cmCPU)
	bn.membersAdd(n, fmt.Sprintf("at rest, %s: federation apiserver CPU %% of a core (no member: %.2f)", what, 100*none.apiCPU), 100*at.apiCPU)
	bn.membersZero(n, fmt.Sprintf("at rest, %s: member writes (over %s)", what, w), at.writes)
}

// memberAway stops the last member's kube-apiserver for -members-away,
// updates every burst object at the federation meanwhile, and times from
// its start until the federation sees it Ready and until all its copies
// are up to date.
func (bn *bench) memberAway(ctx context.Context, n int) {
	away := bn.clusters[len(bn.clusters)-1]
	others := bn.clusters[:len(bn.clusters)-1]
	bn.check(bn.env.StopAPIServer(away))
	left := time.Now()
	o := bn.observeIn(others, fedNamespace, fedSelector)
	start := time.Now()
	bn.check(parallel(len(burstNames), fedWriters, func(i int) error {
		_, err := bn.fed.CoreV1().ConfigMaps(fedNamespace).Patch(ctx, burstNames[i], types.MergePatchType, []byte(`{"data":{"version":"2"}}`), metav1.PatchOptions{})
		return err
	}))
	_, _, err := o.wait(burstNames, start, present("2"), bn.convergeTimeout(len(burstNames)), "the update to the members still there")
	o.stop()
	bn.check(err)
	time.Sleep(time.Until(left.Add(*membersAwayFlag))) // the time away is the workload
	bn.check(bn.env.StartAPIServer(ctx, away))
	back := time.Now()
	var ready, current time.Duration
	bn.check(poll.UntilEvery(ctx, 5*time.Minute, 250*time.Millisecond, away+" Ready with every copy up to date", func(ctx context.Context) error {
		if ready == 0 {
			c, err := bn.fedClusters.FederationV1beta1().Clusters().Get(ctx, away, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if federationv1beta1.IsClusterReady(c) {
				ready = time.Since(back)
			}
		}
		if current == 0 {
			stale, err := bn.notAt(ctx, away, burstNames, "2")
			if err != nil {
				return err
			}
			if stale > 0 {
				return fmt.Errorf("%d copies not yet up to date", stale)
			}
			current = time.Since(back)
		}
		if ready == 0 {
			return fmt.Errorf("not Ready yet")
		}
		return nil
	}))
	bn.membersAdd(n, fmt.Sprintf("a member back after %s away: seconds until it is Ready at the federation", *membersAwayFlag), ready.Seconds())
	bn.membersAdd(n, fmt.Sprintf("a member back after %s away: seconds until its %d copies updated meanwhile are current", *membersAwayFlag, len(burstNames)), current.Seconds())
}

// joinMore joins -members-join more members and times until they are
// Ready and until every federated ConfigMap has its copy in each.
func (bn *bench) joinMore(ctx context.Context, n int) {
	more := bn.names(n, n+*membersJoinFlag)
	list, err := bn.fed.CoreV1().ConfigMaps(fedNamespace).List(ctx, metav1.ListOptions{})
	bn.check(err)
	var names []string
	for _, cm := range list.Items {
		if cm.Name != "kube-root-ca.crt" { // a member's own, where it has one
			names = append(names, cm.Name)
		}
	}
	start := time.Now()
	bn.join(more, nil)
	ready := time.Since(start)
	bn.check(poll.UntilEvery(ctx, 5*time.Minute, 250*time.Millisecond, fmt.Sprintf("%d copies in each of %v", len(names), more), func(ctx context.Context) error {
		for _, c := range more {
			missing, err := bn.notAt(ctx, c, names, "")
			if err != nil {
				return err
			}
			if missing > 0 {
				return fmt.Errorf("%s: %d copies missing", c, missing)
			}
		}
		return nil
	}))
	all := time.Since(start)
	bn.membersAdd(n, fmt.Sprintf("%d more members joined at N (kubefed join, %d at a time): seconds until all are Ready", len(more), joinersAtOnce), ready.Seconds())
	bn.membersAdd(n, fmt.Sprintf("%d more members joined at N: seconds until the %d objects are copied to each", len(more), len(names)), all.Seconds())
}

// notAt counts the names whose copy in cluster is missing or, when version
// is not "", holds another version.
func (bn *bench) notAt(ctx context.Context, cluster string, names []string, version string) (int, error) {
	list, err := bn.watchers[cluster].CoreV1().ConfigMaps(fedNamespace).List(ctx, metav1.ListOptions{LabelSelector: fedSelector})
	if err != nil {
		return 0, err
	}
	have := map[string]bool{}
	for _, cm := range list.Items {
		if version == "" || cm.Data["version"] == version {
			have[cm.Name] = true
		}
	}
	missing := 0
	for _, name := range names {
		if !have[name] {
			missing++
		}
	}
	return missing, nil
}
