package membercluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSlimPodKeepsOnlyWhatSchedulingNeeds(t *testing.T) {
	conditions := []any{map[string]any{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}}
	pod := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p", "namespace": "ns", "labels": map[string]any{"app": "a"},
			"annotations": map[string]any{"big": "x"}},
		"spec":   map[string]any{"nodeName": "", "containers": []any{map[string]any{"name": "c", "image": "i"}}},
		"status": map[string]any{"phase": "Pending", "conditions": conditions, "containerStatuses": []any{}},
	}}
	slimPod(pod)
	assert.Equal(t, map[string]any{"nodeName": ""}, pod.Object["spec"])
	assert.Equal(t, map[string]any{"phase": "Pending", "conditions": conditions}, pod.Object["status"])
	assert.Equal(t, map[string]string{"app": "a"}, pod.GetLabels(), "labels name the workload's pods")
	assert.Nil(t, pod.GetAnnotations())
	assert.Equal(t, "status.phase=Pending", fieldSelectors[PodsResource], "only Pending pods are cached")
}
