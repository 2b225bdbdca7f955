package faults_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/test/fedenv"
)

// The burst of every case.
const (
	burstConfigMaps  = 1000
	burstDeployments = 30
	burstWrites      = burstConfigMaps + burstDeployments
	// strikeAt and recoverAt are the acknowledged writes of the burst
	// after which a fault strikes and, for those the case ends itself, is
	// undone: a point chosen by progress, never by time.
	strikeAt  = 300
	recoverAt = 700
)

// convergeTimeout bounds each case's convergence; the whole matrix takes
// about a tenth of it per case on a 2-core machine.
const convergeTimeout = 4 * time.Minute

// TestFaultMatrix runs the six cases one after another on one federation,
// each in its own namespace, then checks every case's namespace once more
// (a later fault must not undo an earlier case's work) and prints the table.
func TestFaultMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an HA federation and member clusters")
	}
	started := time.Now()
	f := newFixture(t)
	t.Logf("federation and members up in %s", time.Since(started).Round(100*time.Millisecond))
	t.Run("the verifier finds what it must", f.checkVerifier)
	var results []*result
	var settled []expectation
	for i, c := range matrix {
		number := i + 1
		r := &result{Case: fmt.Sprintf("%d. %s", number, c.title)}
		t.Run(c.name, func(t *testing.T) {
			results = append(results, r) // not when -run leaves it out
			if e := f.runCase(t, fmt.Sprintf("faults-%d", number), r, c.run); e != nil {
				settled = append(settled, *e)
			}
		})
	}
	t.Run("every case still holds", func(t *testing.T) {
		for _, e := range settled {
			v, err := f.verifier.pass(t.Context(), e)
			require.NoError(t, err)
			if !v.ok() {
				t.Errorf("namespace %s after the later cases: %s", e.ns, v)
			}
		}
	})
	t.Logf("the fault matrix:\n%s", table(results))
	path, err := writeResults(results, started, fedenv.Version)
	require.NoError(t, err)
	t.Logf("written to %s; the whole suite took %s", path, time.Since(started).Round(time.Second))
}

// faultCase is a row of the matrix: run writes the case's objects and
// strikes its fault, and returns once the fault is over and the writes are
// done.
type faultCase struct {
	name, title string
	run         func(c *caseRun)
}

// caseRun is one case under way.
type caseRun struct {
	*fixture
	t   *testing.T
	w   *writer
	res *result
	// recovered is when the fault was over (the system whole again).
	recovered time.Time
	// gone: the case deleted its namespace.
	gone bool
}

// runCase creates the namespace, runs the case, then verifies the
// namespace until it converges, filling r. It returns what the namespace
// must stay, or nil when it did not converge.
func (f *fixture) runCase(t *testing.T, ns string, r *result, run func(c *caseRun)) *expectation {
	start := time.Now()
	c := &caseRun{fixture: f, t: t, w: newWriter(f.writes, ns), res: r}
	e := expectation{ns: ns, want: c.w.expected}
	defer func() { r.Retries = c.w.retries.Load() }()
	require.NoError(t, c.w.run([]op{c.w.createNamespace()}))
	run(c)
	e.gone = c.gone
	clock := c.recovered
	if last := c.w.lastAckTime(); last.After(clock) {
		clock = last
	}
	v, at, err := f.verifier.converge(e, convergeTimeout)
	if !at.IsZero() {
		r.Verdict = &v
	}
	if err != nil {
		t.Errorf("%s did not converge: %v\nthe last complete pass found %s", ns, err, v)
		return nil
	}
	r.Converge, r.Total = at.Sub(clock), at.Sub(start)
	t.Logf("%s: converged %s after the fault and the writes, %s after the case began; %d retried writes",
		ns, r.Converge.Round(100*time.Millisecond), r.Total.Round(100*time.Millisecond), c.w.retries.Load())
	return &e
}

// matrix is the six cases, in order.
var matrix = []faultCase{
	{name: "leader-killed", title: "the leading controller manager killed (-9) mid-burst", run: leaderKilled},
	{name: "apiserver-killed", title: "a federation apiserver killed (-9) mid-burst, restarted", run: apiserverKilled},
	{name: "etcd-member-killed", title: "the etcd leader killed (-9) mid-burst, restarted", run: etcdMemberKilled},
	{name: "member-apiserver-stopped", title: "a member's kube-apiserver stopped during a burst and a deletion, started", run: memberAPIServerStopped},
	{name: "controller-managers-stopped", title: "both controller managers stopped for 60 s while objects change, started", run: controllerManagersStopped},
	{name: "apiservers-restarted", title: "both federation apiservers restarted during a namespace deletion", run: apiserversRestarted},
}
