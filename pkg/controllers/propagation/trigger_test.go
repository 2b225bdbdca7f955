package propagation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

func TestNeedsSync(t *testing.T) {
	base := configMapObj("a")
	base.SetResourceVersion("1")
	change := func(f func(o *unstructured.Unstructured)) *unstructured.Unstructured {
		o := base.DeepCopy()
		o.SetResourceVersion("2")
		f(o)
		return o
	}
	withFinalizer := change(func(o *unstructured.Unstructured) {
		o.SetFinalizers([]string{federationv1beta1.FinalizerDeleteFromUnderlyingClusters})
	})
	for _, tt := range []struct {
		name     string
		old, cur *unstructured.Unstructured
		want     bool
	}{
		{"our finalizer added", base, withFinalizer, false},
		{"status written", base, change(func(o *unstructured.Unstructured) { o.Object["status"] = map[string]any{"replicas": int64(3)} }), false},
		{"managed fields only", base, change(func(o *unstructured.Unstructured) {
			o.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: writer.FieldManager}})
		}), false},
		{"data changed", base, change(func(o *unstructured.Unstructured) { o.Object["data"] = map[string]any{"k": "new"} }), true},
		{"annotation changed", base, change(func(o *unstructured.Unstructured) { o.SetAnnotations(map[string]string{"x": "y"}) }), true},
		{"finalizer removed", withFinalizer, change(func(*unstructured.Unstructured) {}), true},
		{"deletion started", withFinalizer, change(func(o *unstructured.Unstructured) {
			o.SetFinalizers([]string{federationv1beta1.FinalizerDeleteFromUnderlyingClusters})
			o.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
		}), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, needsSync(tt.old, tt.cur))
		})
	}
}

// A quota's hard limits patched through /status are reconciled at once;
// types without the check, and objects being deleted, are not.
func TestStatusTampered(t *testing.T) {
	quotas, configMaps := federatedtypes.ByName("resourcequotas"), federatedtypes.ByName("configmaps")
	require.NotNil(t, quotas)
	require.NotNil(t, configMaps)
	quota := &unstructured.Unstructured{Object: map[string]any{
		"spec":   map[string]any{"hard": map[string]any{"cpu": "500m"}},
		"status": map[string]any{"hard": map[string]any{"cpu": "2"}},
	}}
	assert.True(t, statusTampered(quotas, quota))
	assert.False(t, statusTampered(configMaps, quota), "no check for the type")
	deleting := quota.DeepCopy()
	deleting.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
	assert.False(t, statusTampered(quotas, deleting))
	require.NoError(t, unstructured.SetNestedField(quota.Object, "500m", "status", "hard", "cpu"))
	assert.False(t, statusTampered(quotas, quota), "as the federation writes it")
}
