package customresources

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// members makes member copies from JSON by cluster.
func members(t *testing.T, byCluster map[string]string) []federatedtypes.Member {
	var out []federatedtypes.Member
	for cluster, raw := range byCluster {
		obj := map[string]any{}
		require.NoError(t, json.Unmarshal([]byte(raw), &obj))
		out = append(out, federatedtypes.Member{Cluster: cluster, Object: &unstructured.Unstructured{Object: obj}})
	}
	return out
}

func ready(status, at string) string {
	return `{"type":"Ready","status":"` + status + `","lastTransitionTime":"` + at + `"}`
}

func TestStatusIsReadyWhenEveryMemberIsReady(t *testing.T) {
	rules, err := aggregationRules(`{"readyReplicas":"sum","replicas":"max"}`)
	require.NoError(t, err)
	status, annotations := statusOf(rules)(members(t, map[string]string{
		"c1": `{"status":{"readyReplicas":2,"replicas":3,"conditions":[` + ready("True", "2026-01-01T00:00:00Z") + `]}}`,
		"c2": `{"status":{"readyReplicas":1,"replicas":2,"conditions":[` + ready("True", "2026-01-02T00:00:00Z") + `]}}`,
	}))
	assert.Equal(t, int64(3), status["readyReplicas"])
	assert.Equal(t, int64(3), status["replicas"])
	conditions := status["conditions"].([]any)
	require.Len(t, conditions, 1)
	c := conditions[0].(map[string]any)
	assert.Equal(t, "True", c["status"])
	assert.Equal(t, "2026-01-02T00:00:00Z", c["lastTransitionTime"], "the latest of the members' times, so that it moves only with them")

	var byCluster map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(annotations[ClusterStatusAnnotation]), &byCluster))
	assert.Equal(t, float64(2), byCluster["c1"]["readyReplicas"])
	assert.Equal(t, float64(1), byCluster["c2"]["readyReplicas"])
}

func TestStatusIsNotReadyNamingTheClusters(t *testing.T) {
	status, _ := statusOf(nil)(members(t, map[string]string{
		"c1": `{"status":{"conditions":[` + ready("True", "2026-01-01T00:00:00Z") + `]}}`,
		"c2": `{"status":{"conditions":[` + ready("False", "2026-01-01T00:00:00Z") + `]}}`,
		"c3": `{"spec":{}}`,
	}))
	c := status["conditions"].([]any)[0].(map[string]any)
	assert.Equal(t, "False", c["status"])
	assert.Equal(t, "not ready in c2, c3", c["message"])
}

func TestStatusWithoutReadyConditionsHasNone(t *testing.T) {
	status, annotations := statusOf(nil)(members(t, map[string]string{"c1": `{"spec":{}}`}))
	assert.NotContains(t, status, "conditions")
	assert.Equal(t, "", annotations[ClusterStatusAnnotation], "no status anywhere: the annotation goes")
}

func TestClusterStatusIsBounded(t *testing.T) {
	big := strings.Repeat("x", maxClusterStatus)
	value := clusterStatus(members(t, map[string]string{
		"c1": `{"status":{"message":"` + big + `"}}`,
		"c2": `{"status":{"phase":"Issued"}}`,
	}))
	assert.Less(t, len(value), maxClusterStatus)
	var byCluster map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(value), &byCluster))
	assert.Contains(t, byCluster["c1"]["omitted"], "bytes")
	assert.Equal(t, "Issued", byCluster["c2"]["phase"])
}

func TestAggregateKeepsFractions(t *testing.T) {
	rules, err := aggregationRules(`{"load.average":"min"}`)
	require.NoError(t, err)
	status, _ := statusOf(rules)(members(t, map[string]string{
		"c1": `{"status":{"load":{"average":0.5}}}`, "c2": `{"status":{"load":{"average":1.5}}}`,
	}))
	assert.Equal(t, map[string]any{"average": 0.5}, status["load"])
}
