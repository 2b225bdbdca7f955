package propagation

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/batch"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	"k8s.io/kubernetes/pkg/registry/batch/job"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// TestAFailedJobStatusIsOneTheApiserverTakes: the status a federated Job
// gets when a member's part fails (FailureTarget, then Failed) passes the
// federation apiserver's Job status validation at each step, which refuses
// a finished Job with active pods or Failed without FailureTarget.
func TestAFailedJobStatusIsOneTheApiserverTakes(t *testing.T) {
	jobs := federatedtypes.ByName("jobs")
	member := func(cluster string, status map[string]any) federatedtypes.Member {
		return federatedtypes.Member{Cluster: cluster, Object: &unstructured.Unstructured{Object: map[string]any{"status": status}}}
	}
	failed := []any{map[string]any{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit",
		"lastProbeTime": "2026-01-01T00:03:00Z", "lastTransitionTime": "2026-01-01T00:03:00Z"}}
	complete := []any{
		map[string]any{"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached", "lastTransitionTime": "2026-01-01T00:01:00Z"},
		map[string]any{"type": "Complete", "status": "True", "reason": "CompletionsReached", "lastTransitionTime": "2026-01-01T00:01:00Z"},
	}
	steps := [][]federatedtypes.Member{
		{member("c1", map[string]any{"active": int64(1), "startTime": "2026-01-01T00:00:01Z"}), member("c2", map[string]any{"active": int64(1), "startTime": "2026-01-01T00:00:02Z"})},
		{member("c1", map[string]any{"failed": int64(7), "startTime": "2026-01-01T00:00:01Z", "conditions": failed}), member("c2", map[string]any{"active": int64(1), "startTime": "2026-01-01T00:00:02Z"})},
		{member("c1", map[string]any{"failed": int64(7), "startTime": "2026-01-01T00:00:01Z", "conditions": failed}),
			member("c2", map[string]any{"succeeded": int64(2), "startTime": "2026-01-01T00:00:02Z", "completionTime": "2026-01-01T00:01:00Z", "conditions": complete})},
	}
	old := internalJob(t, map[string]any{})
	current := map[string]any{}
	for i, members := range steps {
		status, _ := jobs.Status(members)
		jobs.Settle(current, status)
		next := internalJob(t, status)
		errs := job.StatusStrategy.ValidateUpdate(context.Background(), next, old)
		require.Empty(t, errs, "step %d: status %v", i, status)
		old, current = next, status
	}
	require.True(t, hasCondition(old, batch.JobFailed), "the Job failed in the end")
}

func internalJob(t *testing.T, status map[string]any) *batch.Job {
	t.Helper()
	u := map[string]any{"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": "j", "namespace": "ns", "resourceVersion": "1"},
		"spec": map[string]any{"completions": int64(4), "parallelism": int64(2), "selector": map[string]any{"matchLabels": map[string]any{"a": "b"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}},
				"spec": map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}},
		"status": status}
	var external batchv1.Job
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u, &external))
	var internal batch.Job
	require.NoError(t, legacyscheme.Scheme.Convert(&external, &internal, nil))
	return &internal
}

func hasCondition(j *batch.Job, t batch.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == "True" {
			return true
		}
	}
	return false
}
