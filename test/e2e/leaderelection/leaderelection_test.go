package leaderelection_test

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/federation-v1/federation/pkg/localprocess"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// The controller manager's leader election defaults (kube-controller-manager's).
const (
	leaseDuration = 15 * time.Second
	retryPeriod   = 2 * time.Second
	// jitter is client-go's: a standby tries again every retryPeriod to
	// retryPeriod*(1+jitter).
	jitter = 1.2
	lease  = "federation-controller-manager"
)

// converge bounds how long a change may take to reach every member.
const converge = 60 * time.Second

var (
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	three      = []string{"cluster1", "cluster2", "cluster3"}
)

// manager is one controller manager of the test: how to read its /metrics
// and its log.
type manager struct {
	name    string
	metrics func() (string, error)
	log     string
}

// leading reads leader_election_master_status of the federation's lease.
func (m manager) leading(t *testing.T) float64 {
	t.Helper()
	v, ok := m.metric(t, "leader_election_master_status", `name="`+lease+`"`)
	require.True(t, ok, "%s has no leader_election_master_status", m.name)
	return v
}

// writes returns federation_sync_member_writes_total of ConfigMaps by
// verb, summed over the members.
func (m manager) writes(t *testing.T) map[string]float64 {
	t.Helper()
	byVerb := map[string]float64{}
	verb := regexp.MustCompile(`verb="([^"]+)"`)
	for line := range m.lines(t, "federation_sync_member_writes_total{") {
		if strings.Contains(line, `type="configmaps"`) {
			byVerb[verb.FindStringSubmatch(line)[1]] += value(t, line)
		}
	}
	return byVerb
}

// since is what was added to each count since before (zeros left out).
func since(before, after map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for k, v := range after {
		if v != before[k] {
			d[k] = v - before[k]
		}
	}
	return d
}

// quiet is how long the member writes must stay unchanged to be at rest.
const quiet = 3 * time.Second

// atRest waits until m's member writes have not changed for quiet (a
// write's count follows its member's answer, after the member shows the
// copy), and returns them.
func atRest(t *testing.T, m manager) map[string]float64 {
	t.Helper()
	last, since := m.writes(t), time.Now()
	require.NoError(t, poll.Until(context.Background(), 30*time.Second, m.name+"'s member writes at rest for "+quiet.String(), func(context.Context) error {
		if now := m.writes(t); !maps.Equal(now, last) {
			last, since = now, time.Now()
		}
		if time.Since(since) < quiet {
			return fmt.Errorf("last changed %s ago: %v", time.Since(since).Round(time.Second), last)
		}
		return nil
	}))
	return last
}

// metric returns the value of the series name whose labels hold labels.
func (m manager) metric(t *testing.T, name, labels string) (float64, bool) {
	t.Helper()
	for line := range m.lines(t, name+"{") {
		if strings.Contains(line, labels) {
			return value(t, line), true
		}
	}
	return 0, false
}

// lines yields the /metrics lines that start with prefix.
func (m manager) lines(t *testing.T, prefix string) func(func(string) bool) {
	t.Helper()
	body, err := m.metrics()
	require.NoError(t, err, m.name)
	return func(yield func(string) bool) {
		sc := bufio.NewScanner(strings.NewReader(body))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), prefix) && !yield(sc.Text()) {
				return
			}
		}
	}
}

func value(t *testing.T, line string) float64 {
	fields := strings.Fields(line)
	v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
	require.NoError(t, err, line)
	return v
}

// identity is the leader election identity the manager logged.
func (m manager) identity(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(m.log)
	require.NoError(t, err)
	match := regexp.MustCompile(`standby until this controller manager holds the lease" identity="([^"]+)"`).FindSubmatch(b)
	require.NotNil(t, match, "no identity in %s", m.log)
	return string(match[1])
}

func (m manager) logged(t *testing.T, text string) bool {
	t.Helper()
	b, err := os.ReadFile(m.log)
	require.NoError(t, err)
	return strings.Contains(string(b), text)
}

// waitLeading waits until m reports itself the leader, polling often, and
// returns when it first did.
func waitLeading(t *testing.T, m manager, timeout time.Duration) time.Time {
	t.Helper()
	require.NoError(t, poll.UntilEvery(context.Background(), timeout, 100*time.Millisecond, m.name+" to lead", func(context.Context) error {
		if v := m.leading(t); v != 1 {
			return fmt.Errorf("leader_election_master_status is %v", v)
		}
		return nil
	}))
	return time.Now()
}

type fixture struct {
	fedenv.Fixture
}

func (f *fixture) in(t *testing.T) *fixture {
	c := *f
	c.T = t
	return &c
}

// holder is the Lease's holderIdentity, as kubectl shows it.
func (f *fixture) holder() string {
	f.T.Helper()
	return f.Kubectl("-n", "federation-system", "get", "lease", lease, "-o", "jsonpath={.spec.holderIdentity}")
}

// waitData waits until every member holds the ConfigMap with data k=v.
func (f *fixture) waitData(name, v string) {
	f.T.Helper()
	require.NoError(f.T, poll.Until(context.Background(), converge, fmt.Sprintf("configmap le/%s with k=%s in %v", name, v, three), func(ctx context.Context) error {
		for _, c := range three {
			client, err := f.Clients.Dynamic(c)
			if err != nil {
				return err
			}
			obj, err := client.Resource(configMaps).Namespace("le").Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("absent in %s", c)
			}
			if err != nil {
				return err
			}
			if got := obj.Object["data"].(map[string]any)["k"]; got != v {
				return fmt.Errorf("%s has k=%v", c, got)
			}
		}
		return nil
	}))
}

func configMap(name, v string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: le}\ndata: {k: '%s'}\n", name, v)
}

// createAndUpdate creates the ConfigMap name, waits for it in every
// member, updates it and waits for the update there.
func (f *fixture) createAndUpdate(name string) {
	f.T.Helper()
	f.Apply(configMap(name, "1"))
	f.waitData(name, "1")
	f.Kubectl("-n", "le", "patch", "configmap", name, "-p", `{"data":{"k":"2"}}`)
	f.waitData(name, "2")
}

// TestLeaderElection runs the federation's own controller manager and a
// second one the test starts, against three real members.
func TestLeaderElection(t *testing.T) {
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(3, 1))
	u.InitFederation("fed")
	u.JoinAll("fed", three...)
	f := &fixture{fedenv.NewFixture(t, u, env.Clients(nil), "fed", time.Minute)}
	f.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: le}\n")

	planeProcs := localprocess.FindMentioning(u.PlaneDir("fed"), map[string]bool{processplane.ControllerManager: true})
	require.Len(t, planeProcs, 1, "the plane's controller manager")
	first := manager{name: "the plane's controller manager", log: u.PlaneDir("fed") + "/logs/" + processplane.ControllerManager + ".log",
		metrics: func() (string, error) { return u.ControllerManagerMetrics("fed") }}
	waitLeading(t, first, time.Minute)
	// What one controller manager alone writes for a create and an update.
	before := first.writes(t)
	f.createAndUpdate("alone")
	alone := since(before, atRest(t, first))
	second := u.StartControllerManager("fed")
	standby := manager{name: "the second controller manager", log: second.Log, metrics: second.Metrics}

	t.Run("one leads, the other stands by", func(t *testing.T) {
		f := f.in(t)
		assert.Equal(t, first.identity(t), f.holder())
		assert.NotEqual(t, standby.identity(t), f.holder())
		assert.Equal(t, 1.0, first.leading(t))
		assert.Equal(t, 0.0, standby.leading(t))
		// A standby runs no controller, no informer, no member client.
		body, err := second.Metrics()
		require.NoError(t, err)
		for _, absent := range []string{`workqueue_depth{name="sync_`, "federation_member_cached_objects{", "federation_sync_member_writes_total{", "federation_cluster_probes_total{"} {
			assert.NotContains(t, body, absent, "on the standby's /metrics")
		}
		assert.False(t, standby.logged(t, `"Starting controller" controller=`), "the standby started a controller")
		assert.True(t, standby.logged(t, "Another controller manager leads"))
	})

	t.Run("a change is written once", func(t *testing.T) {
		f := f.in(t)
		leaderBefore, standbyBefore := first.writes(t), standby.writes(t)
		f.createAndUpdate("once")
		leader, other := since(leaderBefore, atRest(t, first)), since(standbyBefore, standby.writes(t))
		t.Logf("member writes of ConfigMaps for a create and an update, by verb: leader %v, standby %v; one controller manager alone %v", leader, other, alone)
		assert.Empty(t, other, "the standby writes nothing")
		assert.Equal(t, 3.0, leader["create"], "one create per member")
		assert.Equal(t, alone["create"], leader["create"])
		assert.Equal(t, alone["patch"], leader["patch"])
		// The first update of a copy we created is two applies around the
		// patch handing the create's fields over: 6 over 3 members, and the
		// late watch events of those steps are not taken for changes by
		// others (they once were, applying each copy a third time). A
		// second writer would double the count.
		assert.Equal(t, alone["apply"], leader["apply"], "the leader applies what one controller manager alone applies")
	})

	var third *fedenv.ControllerManager
	t.Run("the standby takes over when the leader is killed", func(t *testing.T) {
		f := f.in(t)
		killed := time.Now()
		require.NoError(t, syscall.Kill(planeProcs[0].Pid, syscall.SIGKILL))
		bound := leaseDuration + 2*time.Duration(float64(retryPeriod)*(1+jitter))
		took := waitLeading(t, standby, bound+10*time.Second).Sub(killed)
		t.Logf("takeover after kill -9 of the leader: %s (lease duration %s)", took.Round(10*time.Millisecond), leaseDuration)
		assert.LessOrEqual(t, took, bound, "a standby leads within the lease duration plus two of its (jittered) tries")
		assert.Equal(t, standby.identity(t), f.holder())
		created := time.Now()
		f.Apply(configMap("after-kill", "1"))
		f.waitData("after-kill", "1")
		t.Logf("a new ConfigMap reached the 3 members %s after its creation", time.Since(created).Round(10*time.Millisecond))
		third = u.StartControllerManager("fed")
	})

	t.Run("a leader stopped with SIGTERM hands over at once", func(t *testing.T) {
		require.NotNil(t, third, "the previous step failed")
		f := f.in(t)
		next := manager{name: "the third controller manager", log: third.Log, metrics: third.Metrics}
		assert.Equal(t, 0.0, next.leading(t))
		stopped := time.Now()
		require.NoError(t, second.Signal(syscall.SIGTERM))
		code, err := second.Wait(40 * time.Second)
		require.NoError(t, err)
		exited := time.Since(stopped)
		assert.Equal(t, 0, code, "exit code after SIGTERM")
		holder := f.holder()
		assert.Contains(t, []string{"", next.identity(t)}, holder, "released by the leader that stopped")
		took := waitLeading(t, next, leaseDuration).Sub(stopped)
		t.Logf("SIGTERM: the leader exited 0 in %s; the standby led %s after the signal (lease duration %s)",
			exited.Round(10*time.Millisecond), took.Round(10*time.Millisecond), leaseDuration)
		assert.Less(t, took, leaseDuration/2, "hand-over well under the lease duration")
		assert.True(t, standby.logged(t, "Controllers stopped"), "the leader waited for its controllers")
		assert.True(t, standby.logged(t, "Stopped leading"))
		f.Apply(configMap("after-term", "1"))
		f.waitData("after-term", "1")
	})
}
