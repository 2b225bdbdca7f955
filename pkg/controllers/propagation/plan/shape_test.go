package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func loadBalancerService() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web", "namespace": "ns"},
		"spec": map[string]any{"type": "LoadBalancer", "selector": map[string]any{"app": "web"},
			"ports": []any{map[string]any{"port": int64(80), "protocol": "TCP"}}}}}
}

func TestShapeIgnoresStatusAndWriteBookkeeping(t *testing.T) {
	svc := loadBalancerService()
	svc.SetResourceVersion("1")
	before, ok := shape(svc)
	require.True(t, ok)
	after := svc.DeepCopy()
	after.SetResourceVersion("2")
	after.Object["status"] = map[string]any{"loadBalancer": map[string]any{}}
	after.Object["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{"manager": "lbsim", "subresource": "status"}}
	got, _ := shape(after)
	assert.Equal(t, before, got, "status, resourceVersion and managed fields")
	after.SetLabels(map[string]string{"by": "hand"})
	got, _ = shape(after)
	assert.NotEqual(t, before, got, "a label")

	_, ok = shape(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}})
	assert.False(t, ok, "metadata only: nothing to digest")
}

func TestAMembersBindingOfAClaimIsNoChange(t *testing.T) {
	claim := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
		"metadata": map[string]any{"name": "data", "namespace": "ns", "resourceVersion": "1",
			"annotations": map[string]any{"federation.kubernetes.io/applied-hash": "h"}},
		"spec": map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}}}
	written, ok := shape(claim)
	require.True(t, ok)

	bound := claim.DeepCopy()
	bound.SetResourceVersion("2")
	bound.SetAnnotations(map[string]string{"federation.kubernetes.io/applied-hash": "h",
		"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"})
	require.NoError(t, unstructured.SetNestedField(bound.Object, "pv-1", "spec", "volumeName"))
	require.NoError(t, unstructured.SetNestedField(bound.Object, "standard", "spec", "storageClassName"))
	require.NoError(t, unstructured.SetNestedField(bound.Object, "Bound", "status", "phase"))
	got, _ := shape(bound)
	assert.Equal(t, written, got, "the member's binding is no change of what we applied")
	assert.Equal(t, "pv-1", bound.Object["spec"].(map[string]any)["volumeName"], "the object itself is left as it is")

	resized := claim.DeepCopy()
	require.NoError(t, unstructured.SetNestedField(resized.Object, "2Gi", "spec", "resources", "requests", "storage"))
	got, _ = shape(resized)
	assert.NotEqual(t, written, got, "a change of what we applied is one")

	relabelled := claim.DeepCopy()
	relabelled.SetAnnotations(map[string]string{"federation.kubernetes.io/applied-hash": "other"})
	got, _ = shape(relabelled)
	assert.NotEqual(t, written, got)
}
