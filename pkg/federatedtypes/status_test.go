package federatedtypes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

func withStatus(name string, generation int64, annotations map[string]string, status map[string]any) Member {
	o := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	o.SetName("x")
	o.SetNamespace("ns")
	o.SetGeneration(generation)
	o.SetAnnotations(annotations)
	return Member{Cluster: name, Object: o}
}

func ingress(ips ...string) map[string]any {
	var in []any
	for _, ip := range ips {
		in = append(in, map[string]any{"ip": ip})
	}
	return map[string]any{"loadBalancer": map[string]any{"ingress": in}}
}

func TestServiceStatus(t *testing.T) {
	members := []Member{
		withStatus("c3", 0, nil, ingress("10.0.0.3")),
		withStatus("c1", 0, nil, ingress("10.0.0.9", "10.0.0.1")),
		withStatus("c2", 0, nil, ingress("10.0.0.2")),
		withStatus("c4", 0, nil, map[string]any{}),
	}
	members[0].ReadyEndpoints = true
	members[1].ReadyEndpoints = true
	status, annotations := serviceStatus(members)
	assert.Equal(t, map[string]any{"loadBalancer": map[string]any{"ingress": []any{
		map[string]any{"ip": "10.0.0.1"}, map[string]any{"ip": "10.0.0.2"}, map[string]any{"ip": "10.0.0.3"}, map[string]any{"ip": "10.0.0.9"},
	}}}, status, "the sorted union")
	assert.JSONEq(t, `{"items":[
		{"cluster":"c1","items":[{"ip":"10.0.0.9"},{"ip":"10.0.0.1"}]},
		{"cluster":"c2","items":null},
		{"cluster":"c3","items":[{"ip":"10.0.0.3"}]}]}`, annotations[federationv1beta1.ServiceIngressesAnnotation],
		"by cluster; null without ready endpoints; none without a load balancer")

	status, annotations = serviceStatus(nil)
	assert.Equal(t, map[string]any{"loadBalancer": map[string]any{}}, status)
	assert.Equal(t, "", annotations[federationv1beta1.ServiceIngressesAnnotation], "an empty value removes the annotation")
}

func TestCountersAreSummed(t *testing.T) {
	members := []Member{
		withStatus("c1", 1, nil, map[string]any{"replicas": int64(2), "readyReplicas": int64(1), "availableReplicas": int64(1), "updatedReplicas": int64(2)}),
		withStatus("c2", 1, nil, map[string]any{"replicas": int64(3), "readyReplicas": int64(3), "availableReplicas": int64(3), "updatedReplicas": int64(3)}),
	}
	members[0].Object.Object["status"].(map[string]any)["unavailableReplicas"] = int64(1)
	status, _ := deploymentStatus(members)
	assert.Equal(t, map[string]any{"replicas": int64(5), "readyReplicas": int64(4), "availableReplicas": int64(4), "updatedReplicas": int64(5),
		"unavailableReplicas": int64(1)}, status)
	status, _ = replicaSetStatus(members)
	assert.Equal(t, map[string]any{"replicas": int64(5), "readyReplicas": int64(4), "availableReplicas": int64(4)}, status,
		"a ReplicaSet's status has no unavailableReplicas")
}

func cond(t, status, reason, changed string) map[string]any {
	return map[string]any{"type": t, "status": status, "reason": reason, "message": reason + " here",
		"lastUpdateTime": changed, "lastTransitionTime": changed}
}

func TestDeploymentConditionsComeFromTheMembers(t *testing.T) {
	member := func(cluster string, conditions ...any) Member {
		return withStatus(cluster, 1, nil, map[string]any{"conditions": conditions})
	}
	available := func(at string) map[string]any { return cond("Available", "True", "MinimumReplicasAvailable", at) }
	progressing := func(at string) map[string]any { return cond("Progressing", "True", "NewReplicaSetAvailable", at) }

	status, _ := deploymentStatus([]Member{
		member("c2", available("2026-01-01T00:00:02Z"), progressing("2026-01-01T00:00:05Z")),
		member("c1", available("2026-01-01T00:00:03Z"), progressing("2026-01-01T00:00:01Z")),
	})
	assert.Equal(t, []any{
		map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "Available in all 2 member clusters",
			"lastUpdateTime": "2026-01-01T00:00:03Z", "lastTransitionTime": "2026-01-01T00:00:03Z"},
		map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": "Progressing in all 2 member clusters",
			"lastUpdateTime": "2026-01-01T00:00:05Z", "lastTransitionTime": "2026-01-01T00:00:05Z"},
	}, status["conditions"], "True everywhere, with the latest times")

	stuck := cond("Progressing", "False", "ProgressDeadlineExceeded", "2026-01-01T00:10:00Z")
	status, _ = deploymentStatus([]Member{
		member("c1", available("2026-01-01T00:00:03Z"), progressing("2026-01-01T00:00:01Z")),
		member("c3", available("2026-01-01T00:00:02Z"), stuck),
	})
	p := status["conditions"].([]any)[1].(map[string]any)
	assert.Equal(t, "False", p["status"])
	assert.Equal(t, "ProgressDeadlineExceeded", p["reason"], "what kubectl rollout status looks for")
	assert.Equal(t, "c3: ProgressDeadlineExceeded here", p["message"])

	status, _ = deploymentStatus([]Member{member("c1")})
	assert.NotContains(t, status, "conditions", "no member reports any yet")
}

func TestHPAUtilisationIsWeightedByReplicas(t *testing.T) {
	cpu := func(util int64) []any {
		return []any{map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu", "current": map[string]any{"averageUtilization": util}}}}
	}
	status, _ := hpaStatus([]Member{
		withStatus("c1", 1, nil, map[string]any{"currentReplicas": int64(1), "desiredReplicas": int64(2), "currentMetrics": cpu(80)}),
		withStatus("c2", 1, nil, map[string]any{"currentReplicas": int64(3), "desiredReplicas": int64(3), "currentMetrics": cpu(40)}),
	})
	assert.Equal(t, int64(4), status["currentReplicas"])
	assert.Equal(t, int64(5), status["desiredReplicas"])
	assert.Equal(t, cpu(50), status["currentMetrics"], "(80*1 + 40*3) / 4")
}

func TestJobStatus(t *testing.T) {
	complete := []any{cond("Complete", "True", "CompletionsReached", "2026-01-01T00:01:00Z")}
	done := []Member{
		withStatus("c1", 1, nil, map[string]any{"succeeded": int64(1), "startTime": "2026-01-01T00:00:05Z", "completionTime": "2026-01-01T00:01:00Z", "conditions": complete}),
		withStatus("c2", 1, nil, map[string]any{"succeeded": int64(2), "failed": int64(1), "startTime": "2026-01-01T00:00:01Z", "completionTime": "2026-01-01T00:02:00Z", "conditions": complete}),
	}
	status, _ := jobStatus(done)
	conditions := status["conditions"].([]any)
	delete(status, "conditions")
	assert.Equal(t, map[string]any{"succeeded": int64(3), "failed": int64(1), "startTime": "2026-01-01T00:00:01Z", "completionTime": "2026-01-01T00:02:00Z"}, status)
	require.Len(t, conditions, 2)
	assert.Equal(t, "SuccessCriteriaMet", conditions[0].(map[string]any)["type"], "the apiserver wants it before Complete")
	assert.Equal(t, "Complete", conditions[1].(map[string]any)["type"])
	assert.Equal(t, "True", conditions[1].(map[string]any)["status"])
	running := append(done, withStatus("c3", 1, nil, map[string]any{"active": int64(1), "startTime": "2026-01-01T00:00:03Z"}))
	status, _ = jobStatus(running)
	assert.NotContains(t, status, "completionTime", "not complete while a member runs")
	assert.NotContains(t, status, "conditions")
	assert.Equal(t, int64(1), status["active"])
}

func TestJobStatusNeverGoesBack(t *testing.T) {
	status := map[string]any{"succeeded": int64(4), "active": int64(1), "startTime": "2026-01-01T00:00:09Z"}
	settleJob(map[string]any{"succeeded": int64(6), "failed": int64(1), "startTime": "2026-01-01T00:00:05Z"}, status)
	assert.Equal(t, map[string]any{"succeeded": int64(6), "failed": int64(1), "active": int64(1), "startTime": "2026-01-01T00:00:05Z"}, status,
		"a member away does not take its pods back")

	done := map[string]any{"succeeded": int64(6), "completionTime": "2026-01-01T00:02:00Z",
		"conditions": []any{cond("Complete", "True", "CompletionsReached", "2026-01-01T00:02:00Z")}}
	status = map[string]any{"succeeded": int64(4), "active": int64(2)}
	settleJob(done, status)
	assert.Equal(t, done, status, "a finished Job's status is final")
}

// A Job is not complete before its members' succeeded pods add up to its
// completions: the one member whose copy came back may have been given
// none of them. A finished status stays.
func TestJobCompletesOnlyWithItsCompletions(t *testing.T) {
	complete := []any{cond("SuccessCriteriaMet", "True", "CompletionsReached", "2026-01-01T00:00:01Z"),
		cond("Complete", "True", "CompletionsReached", "2026-01-01T00:00:01Z")}
	job := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"completions": int64(4), "parallelism": int64(2)}}}
	noPods := withStatus("c2", 1, nil, map[string]any{"startTime": "2026-01-01T00:00:01Z", "completionTime": "2026-01-01T00:00:01Z", "conditions": complete})
	status, _ := jobStatus([]Member{noPods})
	require.Contains(t, status, "completionTime", "the member's part is complete")
	completeJob(job, status, false)
	assert.Equal(t, map[string]any{"startTime": "2026-01-01T00:00:01Z"}, status, "0 of 4 succeeded")

	two := func(c string) Member {
		return withStatus(c, 1, nil, map[string]any{"succeeded": int64(2), "startTime": "2026-01-01T00:00:01Z", "completionTime": "2026-01-01T00:00:03Z", "conditions": complete})
	}
	status, _ = jobStatus([]Member{noPods, two("c1"), two("c3")})
	completeJob(job, status, false)
	assert.Equal(t, "2026-01-01T00:00:03Z", status["completionTime"], "4 of 4")
	assert.Len(t, status["conditions"], 2)

	job.Object["status"] = map[string]any{"completionTime": "2026-01-01T00:00:01Z", "conditions": complete}
	status = map[string]any{"completionTime": "2026-01-01T00:00:01Z", "conditions": complete}
	completeJob(job, status, false)
	assert.Contains(t, status, "completionTime", "finished before: final")

	indexed := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"completions": int64(4), "completionMode": "Indexed"}}}
	status = map[string]any{"succeeded": int64(2), "completionTime": "2026-01-01T00:00:01Z", "conditions": complete}
	completeJob(indexed, status, false)
	assert.Contains(t, status, "completionTime", "an Indexed Job's success policy may need fewer")
}

// An Indexed Job runs whole in one member: its indexes come back, and stay
// while that member is away.
func TestIndexedJobStatusHasItsMembersIndexes(t *testing.T) {
	status, _ := jobStatus([]Member{withStatus("c2", 1, nil, map[string]any{"succeeded": int64(3), "failed": int64(1), "active": int64(2),
		"startTime": "2026-01-01T00:00:05Z", "completedIndexes": "0-2", "failedIndexes": "4"})})
	assert.Equal(t, map[string]any{"succeeded": int64(3), "failed": int64(1), "active": int64(2),
		"startTime": "2026-01-01T00:00:05Z", "completedIndexes": "0-2", "failedIndexes": "4"}, status)

	status, _ = jobStatus(nil)
	settleJob(map[string]any{"succeeded": int64(3), "completedIndexes": "0-2", "startTime": "2026-01-01T00:00:05Z"}, status)
	assert.Equal(t, "0-2", status["completedIndexes"], "its member is away")

	status, _ = jobStatus([]Member{
		withStatus("c1", 1, nil, map[string]any{"succeeded": int64(1), "completedIndexes": "0"}),
		withStatus("c2", 1, nil, map[string]any{"succeeded": int64(1), "completedIndexes": "0"}),
	})
	assert.NotContains(t, status, "completedIndexes", "several members' indexes overlap")
}
