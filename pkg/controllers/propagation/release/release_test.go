package release

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics/testutil"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

func TestTheNeverPropagatedNamespacesDefault(t *testing.T) {
	assert.Equal(t, federatedtypes.NeverPropagatedNamespaces(federatedtypes.DefaultNeverPropagatedNamespaces), neverPropagatedSet(nil))
	assert.True(t, neverPropagatedSet([]string{"monitoring"}).Has(federationv1beta1.SystemNamespace), "the federation's own is always in")
}

// memberCopy is a ConfigMap copy of federation fed in a member.
func memberCopy(name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	o.SetNamespace("ns")
	o.SetName(name)
	o.SetLabels(map[string]string{federationv1beta1.FederationLabel: "fed"})
	o.SetUID(types.UID("uid-" + name))
	return o
}

func TestStrayGaugeFollowsTheClusters(t *testing.T) {
	sc := &strayCounter{}
	ctx := context.Background()
	sc.publish(ctx, "test-type", map[string][]metav1.Object{
		"c1": {memberCopy("a"), memberCopy("b")},
		"c2": nil,
	})
	assert.Equal(t, 2.0, gauge(t, "c1"))
	assert.Equal(t, 0.0, gauge(t, "c2"))
	assert.True(t, sc.logged.Has("c1/ns/a/uid-a"))

	sc.publish(ctx, "test-type", map[string][]metav1.Object{"c1": {memberCopy("a")}})
	assert.Equal(t, 1.0, gauge(t, "c1"))
	_, err := strayCopies.GetMetricWithLabelValues("c2", "test-type")
	require.NoError(t, err)
	assert.False(t, sc.clusters.Has("c2"), "a cluster gone from the count is dropped")
	assert.False(t, sc.logged.Has("c1/ns/b/uid-b"), "a stray that went is forgotten")
}

func gauge(t *testing.T, cluster string) float64 {
	t.Helper()
	v, err := testutil.GetGaugeMetricValue(strayCopies.WithLabelValues(cluster, "test-type"))
	require.NoError(t, err)
	return v
}
