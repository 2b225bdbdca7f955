package federatedtypes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

func TestStatefulSetStatusSumsAndWaitsForEveryMembersRollout(t *testing.T) {
	done := func(cluster string, replicas, ready int64) Member {
		return withStatus(cluster, 1, nil, map[string]any{"replicas": replicas, "readyReplicas": ready, "currentReplicas": replicas,
			"updatedReplicas": replicas, "availableReplicas": ready, "currentRevision": "web-1", "updateRevision": "web-1"})
	}
	members := []Member{done("c2", 1, 1), done("c1", 2, 1), done("c3", 1, 0)}
	status, _ := statefulSetStatus(members)
	assert.Equal(t, map[string]any{"replicas": int64(4), "readyReplicas": int64(2), "currentReplicas": int64(4), "updatedReplicas": int64(4),
		"availableReplicas": int64(2), "currentRevision": "web-1", "updateRevision": "web-1"}, status)

	rolling := done("c2", 1, 1)
	rolling.Object.Object["status"].(map[string]any)["updateRevision"] = "web-2"
	status, _ = statefulSetStatus([]Member{done("c1", 2, 2), rolling, done("c3", 1, 1)})
	assert.Equal(t, "web-1", status["currentRevision"])
	assert.Equal(t, "web-2", status["updateRevision"], "a member still rolling out keeps the revisions apart")

	status, _ = statefulSetStatus(nil)
	assert.Equal(t, map[string]any{"replicas": int64(0), "availableReplicas": int64(0)}, status,
		"the fields without omitempty are there as the apiserver stores them")
}

func TestCronJobStatusListsEveryActiveJobAndTheLatestTimes(t *testing.T) {
	ref := func(name string) any { return map[string]any{"kind": "Job", "namespace": "ns", "name": name} }
	members := []Member{
		withStatus("c2", 1, nil, map[string]any{"active": []any{ref("j-2")}, "lastScheduleTime": "2026-01-01T10:05:00Z"}),
		withStatus("c1", 1, nil, map[string]any{"active": []any{ref("j-1")}, "lastScheduleTime": "2026-01-01T10:00:00Z",
			"lastSuccessfulTime": "2026-01-01T09:00:00Z"}),
		withStatus("c3", 1, nil, map[string]any{}),
	}
	status, _ := cronJobStatus(members)
	assert.Equal(t, map[string]any{"active": []any{ref("j-1"), ref("j-2")},
		"lastScheduleTime": "2026-01-01T10:05:00Z", "lastSuccessfulTime": "2026-01-01T09:00:00Z"}, status)

	status, _ = cronJobStatus(nil)
	assert.Empty(t, status)
}

func TestPodDisruptionBudgetStatus(t *testing.T) {
	pdb := func(cluster string, healthy, allowed int64, condition string) Member {
		return withStatus(cluster, 1, nil, map[string]any{"currentHealthy": healthy, "desiredHealthy": int64(1), "expectedPods": int64(2),
			"disruptionsAllowed": allowed, "conditions": []any{map[string]any{"type": "DisruptionAllowed", "status": condition,
				"reason": map[string]string{"True": "SufficientPods", "False": "InsufficientPods"}[condition], "message": "",
				"lastTransitionTime": "2026-01-01T10:00:00Z"}}})
	}
	status, _ := podDisruptionBudgetStatus([]Member{pdb("c1", 2, 1, "True"), pdb("c2", 2, 1, "True")})
	assert.Equal(t, int64(4), status["currentHealthy"])
	assert.Equal(t, int64(2), status["desiredHealthy"])
	assert.Equal(t, int64(4), status["expectedPods"])
	assert.Equal(t, int64(2), status["disruptionsAllowed"])
	require.Len(t, status["conditions"], 1)
	c := status["conditions"].([]any)[0].(map[string]any)
	assert.Equal(t, "True", c["status"])
	assert.Equal(t, "SufficientPods", c["reason"])
	assert.NotEmpty(t, c["lastTransitionTime"], "metav1.Condition requires it")

	status, _ = podDisruptionBudgetStatus([]Member{pdb("c1", 2, 1, "True"), pdb("c2", 1, 0, "False")})
	assert.Equal(t, int64(1), status["disruptionsAllowed"])
	c = status["conditions"].([]any)[0].(map[string]any)
	assert.Equal(t, "False", c["status"])
	assert.Equal(t, "InsufficientPods", c["reason"])
	assert.Equal(t, "c2: ", c["message"], "the cluster is named")

	status, _ = podDisruptionBudgetStatus(nil)
	assert.Equal(t, map[string]any{"currentHealthy": int64(0), "desiredHealthy": int64(0), "expectedPods": int64(0), "disruptionsAllowed": int64(0)},
		status, "the required counters are there as 0, as the apiserver stores them")
}

func claim(cluster, phase string, capacity map[string]any) Member {
	status := map[string]any{"phase": phase}
	if capacity != nil {
		status["capacity"] = capacity
		status["accessModes"] = []any{"ReadWriteOnce"}
	}
	return withStatus(cluster, 0, nil, status)
}

func TestClaimIsBoundOnlyWhenBoundInEveryCluster(t *testing.T) {
	status, _ := claimStatus([]Member{claim("c2", "Bound", map[string]any{"storage": "2Gi"}), claim("c1", "Bound", map[string]any{"storage": "1Gi"})})
	assert.Equal(t, map[string]any{"phase": "Bound", "accessModes": []any{"ReadWriteOnce"}, "capacity": map[string]any{"storage": "1Gi"}}, status,
		"the capacity every cluster provides")
	completeClaim(nil, status, true)
	assert.Equal(t, "Bound", status["phase"])

	completeClaim(nil, status, false)
	assert.Equal(t, map[string]any{"phase": "Pending"}, status, "a selected cluster does not hold the claim as sent yet")

	status, _ = claimStatus([]Member{claim("c1", "Bound", map[string]any{"storage": "1Gi"}), claim("c2", "Pending", nil)})
	assert.Equal(t, map[string]any{"phase": "Pending", "conditions": []any{
		map[string]any{"type": "Bound", "status": "False", "reason": "Pending", "message": "c2: Pending"}}}, status,
		"the condition names the cluster whose claim is not bound")

	status, _ = claimStatus([]Member{claim("c1", "Bound", map[string]any{"storage": "1Gi"}), claim("c3", "Pending", nil), claim("c2", "Lost", nil)})
	assert.Equal(t, map[string]any{"phase": "Lost", "conditions": []any{
		map[string]any{"type": "Bound", "status": "False", "reason": "Lost", "message": "c2: Lost; c3: Pending"}}}, status,
		"lost anywhere is lost; every cluster not bound is named, in order")

	status, _ = claimStatus(nil)
	assert.Equal(t, map[string]any{"phase": "Pending"}, status)
}

func TestResourceQuotaStatusReportsTheFullestMemberAndEachMembersUse(t *testing.T) {
	members := []Member{
		withStatus("c1", 0, nil, map[string]any{"hard": map[string]any{"pods": "5"}, "used": map[string]any{"pods": "2", "requests.cpu": "500m",
			"configmaps": "3", "count/configmaps": "3"}}),
		withStatus("c2", 0, nil, map[string]any{"hard": map[string]any{"pods": "5"}, "used": map[string]any{"pods": "1", "requests.cpu": "1",
			"count/deployments.apps": "1"}}),
		withStatus("c3", 0, nil, map[string]any{}),
	}
	status, annotations := resourceQuotaStatus(members)
	assert.Equal(t, map[string]any{"used": map[string]any{"pods": "2", "requests.cpu": "1"}}, status,
		"each member enforces the whole quota: the largest use, without the object counts the federation keeps itself")
	assert.JSONEq(t, `{"c1":{"pods":"2","requests.cpu":"500m"},"c2":{"pods":"1","requests.cpu":"1"}}`,
		annotations[federationv1beta1.MemberQuotaUsageAnnotation], "each member's own use")

	fed := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"hard": map[string]any{"pods": "5", "requests.cpu": "2"}}}}
	completeQuota(fed, status, false)
	assert.Equal(t, map[string]any{"pods": "5", "requests.cpu": "2"}, status["hard"], "the federated object's own limits")

	status, annotations = resourceQuotaStatus(nil)
	assert.Empty(t, status)
	assert.Equal(t, map[string]string{federationv1beta1.MemberQuotaUsageAnnotation: ""}, annotations, "removed when no member reports")
}

// A quota's hard limits patched through /status are told from the
// federation's own status, which completeQuota writes from the spec.
func TestQuotaHardTamperedIsSomeoneElsesStatusHard(t *testing.T) {
	quota := func(spec, status map[string]any) *unstructured.Unstructured {
		obj := map[string]any{"spec": map[string]any{"hard": spec}}
		if status != nil {
			obj["status"] = map[string]any{"hard": status}
		}
		return &unstructured.Unstructured{Object: obj}
	}
	spec := map[string]any{"cpu": "500m", "memory": "500Mi", "count/configmaps": "5"}
	for _, tc := range []struct {
		name     string
		status   map[string]any
		tampered bool
	}{
		{"no status yet", nil, false},
		{"as the spec", map[string]any{"cpu": "500m", "memory": "500Mi", "count/configmaps": "5"}, false},
		{"the same quantities written otherwise", map[string]any{"cpu": "0.5", "memory": "500Mi"}, false},
		{"an object count changed: the quota controller's to put back", map[string]any{"cpu": "500m", "memory": "500Mi", "count/configmaps": "9"}, false},
		{"a limit patched", map[string]any{"cpu": "2", "memory": "2Gi", "count/configmaps": "5"}, true},
		{"a limit missing", map[string]any{"cpu": "500m"}, true},
		{"a limit added", map[string]any{"cpu": "500m", "memory": "500Mi", "pods": "3"}, true},
		{"not a quantity", map[string]any{"cpu": "lots", "memory": "500Mi"}, true},
	} {
		assert.Equal(t, tc.tampered, quotaHardTampered(quota(spec, tc.status)), tc.name)
	}

	// What completeQuota writes is never taken for tampering.
	fed := quota(spec, map[string]any{"cpu": "2", "memory": "2Gi", "count/configmaps": "5"})
	status := map[string]any{}
	completeQuota(fed, status, true)
	require.NoError(t, unstructured.SetNestedField(fed.Object, status, "status"))
	assert.False(t, quotaHardTampered(fed))
}

func TestQuotaCountedAreTheObjectCountsOfTheNamespacedFederatedTypes(t *testing.T) {
	for _, name := range []string{"count/configmaps", "configmaps", "count/secrets", "secrets", "count/services", "services",
		"services.loadbalancers", "services.nodeports", "count/persistentvolumeclaims", "persistentvolumeclaims",
		"count/resourcequotas", "resourcequotas", "count/deployments.apps", "count/jobs.batch", "count/serviceaccounts",
		"count/horizontalpodautoscalers.autoscaling", "count/ingresses.networking.k8s.io", "count/rolebindings.rbac.authorization.k8s.io"} {
		assert.True(t, QuotaCounted(name), name)
	}
	for _, name := range []string{"pods", "count/pods", "requests.cpu", "limits.memory", "requests.storage", "count/namespaces",
		"replicationcontrollers", "count/replicationcontrollers", "count/deployments.extensions", "count/widgets.example.com",
		"gold.storageclass.storage.k8s.io/requests.storage"} {
		assert.False(t, QuotaCounted(name), name)
	}
}

// TestCompleteQuotaLeavesTheFederationsCountsToTheQuotaController: the
// status written from the members keeps the object counts (hard and used)
// as the federated object has them, and the rest from the spec and the
// members, masked to the spec's limits.
func TestCompleteQuotaLeavesTheFederationsCountsToTheQuotaController(t *testing.T) {
	for _, tc := range []struct {
		name          string
		spec, current map[string]any // spec.hard; status
		summed        map[string]any // the members' used
		want          map[string]any
	}{{
		name:   "a new quota: only what members count, until the quota controller counts the federation's objects",
		spec:   map[string]any{"count/configmaps": "5", "requests.cpu": "2"},
		summed: map[string]any{"requests.cpu": "1"},
		want:   map[string]any{"hard": map[string]any{"requests.cpu": "2"}, "used": map[string]any{"requests.cpu": "1"}},
	}, {
		name:    "counted: the federation's counts stay, the members' sums change",
		spec:    map[string]any{"count/configmaps": "5", "configmaps": "6", "requests.cpu": "2"},
		current: map[string]any{"hard": map[string]any{"count/configmaps": "5", "configmaps": "6", "requests.cpu": "2"}, "used": map[string]any{"count/configmaps": "4", "configmaps": "4", "requests.cpu": "1"}},
		summed:  map[string]any{"requests.cpu": "1500m"},
		want: map[string]any{"hard": map[string]any{"count/configmaps": "5", "configmaps": "6", "requests.cpu": "2"},
			"used": map[string]any{"count/configmaps": "4", "configmaps": "4", "requests.cpu": "1500m"}},
	}, {
		name:    "a changed limit of a count is the quota controller's to write, with its usage",
		spec:    map[string]any{"count/secrets": "9"},
		current: map[string]any{"hard": map[string]any{"count/secrets": "3"}, "used": map[string]any{"count/secrets": "2"}},
		want:    map[string]any{"hard": map[string]any{"count/secrets": "3"}, "used": map[string]any{"count/secrets": "2"}},
	}, {
		name:    "what members count beyond the spec's limits (an older spec there) is not reported",
		spec:    map[string]any{"pods": "10"},
		current: map[string]any{"hard": map[string]any{"pods": "10"}},
		summed:  map[string]any{"pods": "4", "requests.memory": "1Gi"},
		want:    map[string]any{"hard": map[string]any{"pods": "10"}, "used": map[string]any{"pods": "4"}},
	}, {
		name: "no limits, nothing",
		want: map[string]any{},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			fed := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
			if tc.spec != nil {
				fed.Object["spec"] = map[string]any{"hard": tc.spec}
			}
			if tc.current != nil {
				fed.Object["status"] = tc.current
			}
			status := map[string]any{}
			if tc.summed != nil {
				status["used"] = tc.summed
			}
			completeQuota(fed, status, true)
			assert.Equal(t, tc.want, status)
		})
	}
}
