package sync_test

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// converge bounds how long propagation may take in these tests.
const converge = 45 * time.Second

// fixture is a federation "fed" with member clusters.
type fixture struct {
	fedenv.Fixture
	env *memberenv.Environment
}

// in returns the fixture for a subtest.
func (f *fixture) in(t *testing.T) *fixture {
	c := *f
	c.T = t
	return &c
}

// metadata returns a metadata-only client of a member.
func (f *fixture) metadata(cluster string) metadata.Interface {
	f.T.Helper()
	c, err := f.Clients.Metadata(cluster)
	require.NoError(f.T, err)
	return c
}

// newFixture is the fixture of federation "fed" with the members of env.
func newFixture(t *testing.T, u *fedenv.User, env *memberenv.Environment) *fixture {
	clients := env.Clients(func(cfg *rest.Config) { cfg.QPS, cfg.Burst = 50, 100 })
	return &fixture{Fixture: fedenv.NewFixture(t, u, clients, "fed", converge), env: env}
}

// waitGoneAtFederation waits until kubectl no longer finds the object.
func (f *fixture) waitGoneAtFederation(resource, ns, name string) {
	f.T.Helper()
	require.NoError(f.T, poll.Until(context.Background(), converge, "deletion of "+resource+" "+name+" at the federation", func(ctx context.Context) error {
		args := []string{"--context=fed", "get", resource, name, "--ignore-not-found", "-o", "name"}
		if ns != "" {
			args = append(args, "-n", ns)
		}
		out, err := f.User.Kubectl().Run(ctx, args...)
		if err != nil {
			return err
		}
		if strings.TrimSpace(out) != "" {
			return fmt.Errorf("still there: %s", out)
		}
		return nil
	}))
}

func hasAnnotation(key, value string) func(*unstructured.Unstructured) error {
	return func(o *unstructured.Unstructured) error {
		if got := o.GetAnnotations()[key]; got != value {
			return fmt.Errorf("annotation %s is %q, want %q", key, got, value)
		}
		return nil
	}
}

// metrics returns the controller manager's /metrics.
func (f *fixture) metrics() string {
	f.T.Helper()
	body, err := f.User.ControllerManagerMetrics("fed")
	require.NoError(f.T, err)
	return body
}

// memberWrites sums federation_sync_member_writes_total on the controller
// manager's /metrics.
func (f *fixture) memberWrites() float64 {
	f.T.Helper()
	total := 0.0
	for _, v := range f.memberWriteCounters() {
		total += v
	}
	return total
}

// memberWriteCounters returns federation_sync_member_writes_total by labels.
func (f *fixture) memberWriteCounters() map[string]float64 {
	f.T.Helper()
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(f.metrics()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "federation_sync_member_writes_total{") {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		require.NoError(f.T, err, line)
		out[strings.TrimPrefix(fields[0], "federation_sync_member_writes_total")] = v
	}
	return out
}

// changedCounters lists the counters that differ between two readings.
func changedCounters(before, after map[string]float64) []string {
	var out []string
	for k, v := range after {
		if before[k] != v {
			out = append(out, fmt.Sprintf("%s %v->%v", k, before[k], v))
		}
	}
	sort.Strings(out)
	return out
}

// waitCount waits until every cluster has at least n labelled objects whose
// name starts with prefix.
func (f *fixture) waitCount(clusters []string, gvr schema.GroupVersionResource, ns, prefix string, n int) {
	f.T.Helper()
	timeout := max(2*converge, time.Duration(n)*200*time.Millisecond)
	require.NoError(f.T, poll.Until(context.Background(), timeout, fmt.Sprintf("%d %s %s* in %v", n, gvr.Resource, prefix, clusters), func(ctx context.Context) error {
		for _, c := range clusters {
			// Metadata only, from the apiserver's cache: cheap enough to poll.
			list, err := f.metadata(c).Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: federationv1beta1.FederationLabel + "=fed", ResourceVersion: "0"})
			if err != nil {
				return fmt.Errorf("listing in %s: %w", c, err)
			}
			count := 0
			for _, o := range list.Items {
				if strings.HasPrefix(o.GetName(), prefix) {
					count++
				}
			}
			if count < n {
				return fmt.Errorf("%s has %d", c, count)
			}
		}
		return nil
	}))
}

// atRest waits until member writes stop, then checks that none happens for
// the window.
func (f *fixture) atRest(window time.Duration) {
	f.T.Helper()
	last, lastChange := f.memberWrites(), time.Now()
	require.NoError(f.T, poll.Until(context.Background(), time.Minute, "member writes to stop for 5s", func(context.Context) error {
		if now := f.memberWrites(); now != last {
			last, lastChange = now, time.Now()
		}
		if time.Since(lastChange) < 5*time.Second {
			return fmt.Errorf("writes counter at %v", last)
		}
		return nil
	}))
	start := time.Now()
	counters := f.memberWriteCounters()
	err := poll.Until(context.Background(), window, "the end of the quiet window", func(context.Context) error {
		if now := f.memberWriteCounters(); !maps.Equal(now, counters) {
			return poll.Abort(fmt.Errorf("member writes after %s at rest: %v", time.Since(start), changedCounters(counters, now)))
		}
		return fmt.Errorf("quiet for %s", time.Since(start))
	})
	if err != nil && !strings.Contains(err.Error(), "timed out") {
		f.explainWrites()
	}
	require.ErrorContains(f.T, err, "timed out", "the window must end quietly")
	f.T.Logf("no member writes in %s at rest (counter %v)", window, last)
}

// explainWrites logs what tells which objects were written: the
// federation's latest events (one per write of an object, naming its
// clusters) and the members' Deployments and HPAs.
func (f *fixture) explainWrites() {
	f.T.Helper()
	run := func(args ...string) string {
		out, err := f.User.Kubectl().Run(context.Background(), args...)
		if err != nil {
			return fmt.Sprintf("%s\nerror: %v", out, err)
		}
		return out
	}
	events := strings.Split(strings.TrimSpace(run("--context=fed", "get", "events", "-A", "--sort-by=.lastTimestamp", "-o",
		`custom-columns=LAST:.lastTimestamp,COUNT:.count,REASON:.reason,OBJECT:.involvedObject.name,MESSAGE:.message`)), "\n")
	f.T.Logf("the federation's last events:\n%s", strings.Join(events[max(0, len(events)-40):], "\n"))
	cols := `custom-columns=NAME:.metadata.name,GENERATION:.metadata.generation,REPLICAS:.spec.replicas,ANNOTATIONS:.metadata.annotations`
	for _, c := range three {
		f.T.Logf("%s:\n%s\n%s", c, run("--context="+c, "get", "deployments", "-n", "e2e", "-o", cols), run("--context="+c, "get", "hpa", "-n", "e2e"))
	}
}
