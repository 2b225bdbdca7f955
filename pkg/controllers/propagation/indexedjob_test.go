package propagation

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clienttesting "k8s.io/client-go/testing"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/planner/replicaplan"
)

// indexedJob is a federated Indexed Job of 6 completions, 3 at a time.
func indexedJob(annotations map[string]string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job",
		"spec": map[string]any{"completionMode": "Indexed", "completions": int64(6), "parallelism": int64(3),
			"template": map[string]any{"spec": map[string]any{"restartPolicy": "Never",
				"containers": []any{map[string]any{"name": "work", "image": "busybox"}}}}}}}
	o.SetName("j")
	o.SetNamespace("ns")
	o.SetGeneration(1)
	o.SetUID("job-uid")
	o.SetAnnotations(annotations)
	return o
}

// memberJobs are the counts of the Job each member holds.
func memberJobs(members *testmembers.Members) map[string][2]int64 {
	out := map[string][2]int64{}
	members.Mu.Lock()
	defer members.Mu.Unlock()
	for cluster, objs := range members.Cache {
		if o, ok := objs["ns/j"]; ok {
			c, _, _ := unstructured.NestedInt64(o.Object, "spec", "completions")
			p, _, _ := unstructured.NestedInt64(o.Object, "spec", "parallelism")
			out[cluster] = [2]int64{c, p}
		}
	}
	return out
}

// An Indexed Job is not divided: every copy would run indexes 0..5. It
// goes whole to one cluster, with an event, and stays there when a cluster
// that sorts first becomes Ready, or when its own is away.
func TestAnIndexedJobGoesWholeToOneClusterAndStaysThere(t *testing.T) {
	jobs := federatedtypes.ByName("jobs")
	members := testmembers.New([]string{"c1", "c2", "c3"}, "c0")
	tc := newTestController(t, jobs, members, indexedJob(nil))
	require.NoError(t, tc.sync(t, "ns/j"))

	assert.Equal(t, map[string][2]int64{"c1": {6, 3}}, memberJobs(members),
		"the whole Job (completions 6, parallelism 3) in the first cluster by name, no copy elsewhere")
	for _, c := range []string{"c2", "c3"} {
		assert.Empty(t, members.Clients[c].Actions(), "nothing written to %s", c)
	}
	fed := func() *unstructured.Unstructured {
		got, err := tc.fedClient.Resource(jobs.Resource).Namespace("ns").Get(context.Background(), "j", metav1.GetOptions{})
		require.NoError(t, err)
		return got
	}
	assert.Equal(t, replicaplan.Plan{"completions": {"c1": 6}, "parallelism": {"c1": 3}}, replicaplan.FromAnnotations(fed().GetAnnotations()))
	assert.Contains(t, tc.events(), "Normal "+ReasonNotDivided+
		" Job ns/j is an Indexed Job: not divided, it runs whole in cluster c1 (the first by name, without preferences); no other cluster gets a copy")

	// c0 becomes Ready: the Job stays in c1.
	require.NoError(t, tc.indexer.Update(fed()))
	members.Ready = append(members.Ready, members.All[3])
	require.NoError(t, tc.sync(t, "ns/j"))
	assert.Equal(t, map[string][2]int64{"c1": {6, 3}}, memberJobs(members), "not moved to c0")
	assert.Empty(t, members.Clients["c0"].Actions())
	assert.NotContains(t, tc.events(), ReasonNotDivided, "no new choice")

	// c1's copy reports; the federation's status is its status.
	members.Mu.Lock()
	reported := members.Cache["c1"]["ns/j"].DeepCopy()
	reported.Object["status"] = map[string]any{"active": int64(3), "ready": int64(2), "succeeded": int64(2), "failed": int64(1),
		"startTime": "2025-01-01T00:00:00Z", "completedIndexes": "0,2"}
	members.Cache["c1"]["ns/j"] = reported
	members.Mu.Unlock()
	require.NoError(t, tc.sync(t, "ns/j"))
	var status map[string]any
	for _, a := range tc.fedClient.Actions() {
		if u, ok := a.(clienttesting.UpdateAction); ok && a.GetSubresource() == "status" {
			status, _, _ = unstructured.NestedMap(u.GetObject().(*unstructured.Unstructured).Object, "status")
		}
	}
	assert.Equal(t, map[string]any{"active": int64(3), "ready": int64(2), "succeeded": int64(2), "failed": int64(1),
		"startTime": "2025-01-01T00:00:00Z", "completedIndexes": "0,2"}, status)

	// c1 goes away: its copy is left as it is, and no other cluster gets one.
	require.NoError(t, tc.indexer.Update(fed()))
	members.Ready = []*federationv1beta1.Cluster{members.All[1], members.All[2], members.All[3]}
	for _, c := range members.Clients {
		c.ClearActions()
	}
	require.NoError(t, tc.sync(t, "ns/j"))
	for _, c := range []string{"c0", "c1", "c2", "c3"} {
		assert.Empty(t, members.Clients[c].Actions(), "nothing written to %s", c)
	}
	assert.Equal(t, replicaplan.Plan{"completions": {"c1": 6}, "parallelism": {"c1": 3}}, replicaplan.FromAnnotations(fed().GetAnnotations()))
}

// Preferences choose the cluster; those that ask to divide the Job are
// ignored with a warning.
func TestAnIndexedJobsPreferencesChooseItsClusterAndDoNotDivideIt(t *testing.T) {
	jobs := federatedtypes.ByName("jobs")
	members := testmembers.New([]string{"c1", "c2", "c3"})
	tc := newTestController(t, jobs, members, indexedJob(map[string]string{federationv1beta1.JobPreferencesAnnotation: `{"clusters":{"c1":{"weight":1},"c2":{"minReplicas":2,"maxReplicas":4,"weight":1},"c3":{"minReplicas":1,"weight":5}}}`}))
	require.NoError(t, tc.sync(t, "ns/j"))
	assert.Equal(t, map[string][2]int64{"c2": {6, 3}}, memberJobs(members))
	events := tc.events()
	assert.Contains(t, events, "Warning "+ReasonDivisionIgnored+" Job ns/j: its preferences ask to divide it "+
		"(minReplicas in c2, c3; maxReplicas 4 in c2, under its completions 6), which would run the same indexes in several clusters: ignored")
	assert.Contains(t, events, "Normal "+ReasonNotDivided+
		" Job ns/j is an Indexed Job: not divided, it runs whole in cluster c2 (the highest minReplicas in the preferences); no other cluster gets a copy")
}
