package sync

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
		{"cluster":"c3","items":[{"ip":"10.0.0.3"}]}]}`, annotations[ServiceIngressesAnnotation],
		"by cluster; null without ready endpoints; none without a load balancer")

	status, annotations = serviceStatus(nil)
	assert.Equal(t, map[string]any{"loadBalancer": map[string]any{}}, status)
	assert.Equal(t, "", annotations[ServiceIngressesAnnotation], "an empty value removes the annotation")
}

func TestCountersAreSummed(t *testing.T) {
	members := []Member{
		withStatus("c1", 1, nil, map[string]any{"replicas": int64(2), "readyReplicas": int64(1), "availableReplicas": int64(1), "updatedReplicas": int64(2)}),
		withStatus("c2", 1, nil, map[string]any{"replicas": int64(3), "readyReplicas": int64(3), "availableReplicas": int64(3), "updatedReplicas": int64(3)}),
	}
	status, _ := replicasStatus(members)
	assert.Equal(t, map[string]any{"replicas": int64(5), "readyReplicas": int64(4), "availableReplicas": int64(4), "updatedReplicas": int64(5)}, status)
}

func TestJobStatus(t *testing.T) {
	done := []Member{
		withStatus("c1", 1, nil, map[string]any{"succeeded": int64(1), "startTime": "2026-01-01T00:00:05Z", "completionTime": "2026-01-01T00:01:00Z"}),
		withStatus("c2", 1, nil, map[string]any{"succeeded": int64(2), "failed": int64(1), "startTime": "2026-01-01T00:00:01Z", "completionTime": "2026-01-01T00:02:00Z"}),
	}
	status, _ := jobStatus(done)
	assert.Equal(t, map[string]any{"succeeded": int64(3), "failed": int64(1), "startTime": "2026-01-01T00:00:01Z", "completionTime": "2026-01-01T00:02:00Z"}, status)
	running := append(done, withStatus("c3", 1, nil, map[string]any{"active": int64(1), "startTime": "2026-01-01T00:00:03Z"}))
	status, _ = jobStatus(running)
	assert.NotContains(t, status, "completionTime", "not complete while a member runs")
	assert.Equal(t, int64(1), status["active"])
}

func TestRolled(t *testing.T) {
	cur := map[string]string{HashAnnotation: "h"}
	old := map[string]string{HashAnnotation: "old"}
	observed := func(g int64) map[string]any { return map[string]any{"observedGeneration": g} }
	placed := map[string]bool{"c1": true, "c2": true}
	for _, tt := range []struct {
		name    string
		members []Member
		want    bool
	}{
		{"every member holds and observed it", []Member{withStatus("c1", 2, cur, observed(2)), withStatus("c2", 5, cur, observed(5))}, true},
		{"a member has not observed it yet", []Member{withStatus("c1", 2, cur, observed(2)), withStatus("c2", 5, cur, observed(4))}, false},
		{"a member holds an older object", []Member{withStatus("c1", 2, cur, observed(2)), withStatus("c2", 5, old, observed(5))}, false},
		{"a member has no copy", []Member{withStatus("c1", 2, cur, observed(2))}, false},
		{"copies where not placed do not count", []Member{withStatus("c1", 2, cur, observed(2)), withStatus("c9", 1, cur, observed(1))}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Rolled(placed, tt.members, "h"))
		})
	}
}
