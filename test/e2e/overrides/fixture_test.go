package overrides_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// converge bounds how long propagation may take in these tests.
const converge = 45 * time.Second

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// fixture is the federation "fed" with its members.
type fixture struct {
	t       *testing.T
	u       *fedenv.User
	clients *memberenv.Clients
}

func (f *fixture) in(t *testing.T) *fixture {
	c := *f
	c.t = t
	return &c
}

func (f *fixture) member(cluster string) dynamic.Interface {
	f.t.Helper()
	c, err := f.clients.Dynamic(cluster)
	require.NoError(f.t, err)
	return c
}

// kubectl runs kubectl against the federation and fails the test on error.
func (f *fixture) kubectl(args ...string) string {
	f.t.Helper()
	out, err := f.u.Kubectl().Run(context.Background(), append([]string{"--context=fed"}, args...)...)
	require.NoError(f.t, err)
	return out
}

// apply runs kubectl apply of manifest at the federation.
func (f *fixture) apply(manifest string) error {
	_, err := f.u.Kubectl().RunWithInput(context.Background(), manifest, "--context=fed", "apply", "-f", "-")
	return err
}

// waitCopies waits until each cluster's copy of the Deployment ns/name
// passes the cluster's check.
func (f *fixture) waitCopies(ns, name string, checks map[string]func(*unstructured.Unstructured) error) {
	f.t.Helper()
	require.NoError(f.t, poll.Until(context.Background(), converge, fmt.Sprintf("the copies of %s/%s", ns, name), func(ctx context.Context) error {
		for cluster, check := range checks {
			obj, err := f.member(cluster).Resource(deployments).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("%s: %w", cluster, err)
			}
			if err := check(obj); err != nil {
				return fmt.Errorf("%s: %w", cluster, err)
			}
		}
		return nil
	}))
}

// waitEvents waits until the events of the federated object name hold every text.
func (f *fixture) waitEvents(name string, texts ...string) {
	f.t.Helper()
	require.NoError(f.t, poll.Until(context.Background(), converge, fmt.Sprintf("events of %s with %q", name, texts), func(ctx context.Context) error {
		out, err := f.u.Kubectl().Run(ctx, "--context=fed", "get", "events", "-A", "--field-selector=involvedObject.name="+name)
		if err != nil {
			return err
		}
		for _, text := range texts {
			if !strings.Contains(out, text) {
				return fmt.Errorf("no %q in\n%s", text, out)
			}
		}
		return nil
	}))
}

// writes returns federation_sync_member_writes_total of Deployments by
// cluster, from the controller manager's /metrics.
func (f *fixture) writes() map[string]float64 {
	f.t.Helper()
	body, err := f.u.ControllerManagerMetrics("fed")
	require.NoError(f.t, err)
	out, err := fedenv.MetricByLabel(body, "federation_sync_member_writes_total", "cluster", map[string]string{"type": "deployments"})
	require.NoError(f.t, err)
	return out
}

// settled waits until member writes of Deployments stop for 5s, and
// returns the counters then.
func (f *fixture) settled() map[string]float64 {
	f.t.Helper()
	last, lastChange := f.writes(), time.Now()
	require.NoError(f.t, poll.Until(context.Background(), time.Minute, "member writes to stop for 5s", func(context.Context) error {
		if now := f.writes(); !equal(now, last) {
			last, lastChange = now, time.Now()
		}
		if time.Since(lastChange) < 5*time.Second {
			return fmt.Errorf("writes at %v", last)
		}
		return nil
	}))
	return last
}

func equal(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
