package overrides_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
)

// converge bounds how long propagation may take in these tests.
const converge = 45 * time.Second

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// fixture is the federation "fed" with its members.
type fixture struct {
	fedenv.Fixture
}

func (f *fixture) in(t *testing.T) *fixture {
	c := *f
	c.T = t
	return &c
}

// waitCopies waits until each cluster's copy of the Deployment ns/name
// passes the cluster's check.
func (f *fixture) waitCopies(ns, name string, checks map[string]func(*unstructured.Unstructured) error) {
	f.T.Helper()
	require.NoError(f.T, poll.Until(context.Background(), converge, fmt.Sprintf("the copies of %s/%s", ns, name), func(ctx context.Context) error {
		for cluster, check := range checks {
			obj, err := f.Member(cluster).Resource(deployments).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
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

// writes returns federation_sync_member_writes_total of Deployments by
// cluster, from the controller manager's /metrics.
func (f *fixture) writes() map[string]float64 {
	f.T.Helper()
	body, err := f.User.ControllerManagerMetrics("fed")
	require.NoError(f.T, err)
	out, err := fedenv.MetricByLabel(body, "federation_sync_member_writes_total", "cluster", map[string]string{"type": "deployments"})
	require.NoError(f.T, err)
	return out
}

// settled waits until member writes of Deployments stop for 5s, and
// returns the counters then.
func (f *fixture) settled() map[string]float64 {
	f.T.Helper()
	last, lastChange := f.writes(), time.Now()
	require.NoError(f.T, poll.Until(context.Background(), time.Minute, "member writes to stop for 5s", func(context.Context) error {
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
