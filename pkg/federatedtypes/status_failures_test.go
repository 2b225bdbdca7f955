package federatedtypes

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func withConditions(cluster string, status map[string]any, conditions ...any) Member {
	if status == nil {
		status = map[string]any{}
	}
	status["conditions"] = conditions
	return withStatus(cluster, 1, nil, status)
}

func TestReplicaFailureNamesTheClustersThatCannotMakePods(t *testing.T) {
	available := cond("Available", "True", "MinimumReplicasAvailable", "2026-01-01T00:00:01Z")
	progressing := cond("Progressing", "True", "ReplicaSetUpdated", "2026-01-01T00:00:01Z")
	quota := map[string]any{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
		"message":        `pods "web-7d9c-x2x" is forbidden: exceeded quota: none, requested: pods=1, used: pods=0, limited: pods=0`,
		"lastUpdateTime": "2026-01-01T00:00:04Z", "lastTransitionTime": "2026-01-01T00:00:04Z"}

	status, _ := deploymentStatus([]Member{
		withConditions("c1", nil, available, progressing),
		withConditions("c2", nil, available, progressing, quota),
	})
	conditions := status["conditions"].([]any)
	require.Len(t, conditions, 3)
	assert.Equal(t, map[string]any{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
		"message":        `c2: pods "web-7d9c-x2x" is forbidden: exceeded quota: none, requested: pods=1, used: pods=0, limited: pods=0`,
		"lastUpdateTime": "2026-01-01T00:00:04Z", "lastTransitionTime": "2026-01-01T00:00:04Z"}, conditions[2])
	assert.Equal(t, "True", conditions[1].(map[string]any)["status"], "a member that cannot make pods does not fail the rollout by itself")

	webhook := map[string]any{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreateByWebhook", "message": "denied"}
	status, _ = deploymentStatus([]Member{
		withConditions("c3", nil, available, webhook),
		withConditions("c1", nil, available),
		withConditions("c2", nil, available, quota),
	})
	failure := status["conditions"].([]any)[1].(map[string]any)
	assert.Equal(t, "MemberClustersReplicaFailure", failure["reason"], "members fail for different reasons")
	assert.True(t, strings.HasPrefix(failure["message"].(string), `c2: pods "web-7d9c-x2x"`), failure["message"])
	assert.True(t, strings.HasSuffix(failure["message"].(string), "; c3: denied"), "every failing cluster, in order: %s", failure["message"])

	resolved := map[string]any{"type": "ReplicaFailure", "status": "False", "reason": "FailedCreate", "message": "old"}
	status, _ = deploymentStatus([]Member{withConditions("c1", nil, available, progressing, resolved), withConditions("c2", nil, available, progressing)})
	for _, c := range status["conditions"].([]any) {
		assert.NotEqual(t, "ReplicaFailure", c.(map[string]any)["type"], "a healthy Deployment has none, as in a cluster")
	}
}

func TestAFailedPartFailsTheJob(t *testing.T) {
	failed := map[string]any{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit",
		"lastProbeTime": "2026-01-01T00:03:00Z", "lastTransitionTime": "2026-01-01T00:03:00Z"}
	complete := cond("Complete", "True", "CompletionsReached", "2026-01-01T00:01:00Z")
	start := map[string]any{"startTime": "2026-01-01T00:00:01Z"}
	c1Failed := withConditions("c1", map[string]any{"startTime": "2026-01-01T00:00:01Z", "failed": int64(7)}, failed)
	c2Running := withStatus("c2", 1, nil, map[string]any{"startTime": "2026-01-01T00:00:02Z", "active": int64(1)})

	status, _ := jobStatus([]Member{c2Running, c1Failed})
	assert.Equal(t, []any{map[string]any{"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded",
		"message":       "c1: Job has reached the specified backoff limit",
		"lastProbeTime": "2026-01-01T00:03:00Z", "lastTransitionTime": "2026-01-01T00:03:00Z"}}, status["conditions"],
		"it cannot complete: FailureTarget at once, not Failed while another member runs (the apiserver refuses a finished Job with active pods)")
	assert.NotContains(t, status, "completionTime")

	c2Done := withConditions("c2", map[string]any{"startTime": "2026-01-01T00:00:02Z", "succeeded": int64(2), "completionTime": "2026-01-01T00:01:00Z"}, complete)
	status, _ = jobStatus([]Member{c1Failed, c2Done})
	conditions := status["conditions"].([]any)
	require.Len(t, conditions, 2)
	assert.Equal(t, "FailureTarget", conditions[0].(map[string]any)["type"], "the apiserver wants it with Failed")
	assert.Equal(t, map[string]any{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
		"message":       "c1: Job has reached the specified backoff limit",
		"lastProbeTime": "2026-01-01T00:03:00Z", "lastTransitionTime": "2026-01-01T00:03:00Z"}, conditions[1])
	assert.NotContains(t, status, "completionTime", "a failed Job has none")
	assert.Equal(t, start["startTime"], status["startTime"])

	noStart := withConditions("c1", nil, failed)
	status, _ = jobStatus([]Member{noStart})
	assert.Len(t, status["conditions"], 1, "no Failed without a startTime, which the apiserver wants of a finished Job")

	for _, c := range conditions {
		assert.NotContains(t, c, "lastUpdateTime", "a Job's conditions have no such field: the apiserver would drop it and every sync would write again")
	}
}

func TestFailureTargetStaysWhileTheFailedMemberIsAway(t *testing.T) {
	target := map[string]any{"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded", "message": "c1: limit"}
	current := map[string]any{"startTime": "2026-01-01T00:00:01Z", "conditions": []any{target}}
	complete := cond("Complete", "True", "CompletionsReached", "2026-01-01T00:01:00Z")
	status, _ := jobStatus([]Member{withConditions("c2", map[string]any{"startTime": "2026-01-01T00:00:02Z", "succeeded": int64(2),
		"completionTime": "2026-01-01T00:01:00Z"}, complete)})
	require.Contains(t, status, "completionTime", "c2 alone completed")
	settleJob(current, status)
	assert.Equal(t, []any{target}, status["conditions"], "the apiserver does not let FailureTarget go, nor lets a Job with it complete")
	assert.NotContains(t, status, "completionTime")
}
