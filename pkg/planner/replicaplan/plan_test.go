package replicaplan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

func workload(kind string, spec map[string]any, annotations map[string]string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": kind, "spec": spec}}
	o.SetName("web")
	o.SetNamespace("ns")
	o.SetAnnotations(annotations)
	return o
}

func TestPlanReplicas(t *testing.T) {
	three := []string{"cluster1", "cluster2", "cluster3"}
	deployments := federatedtypes.ByName("deployments").Replicas
	for _, tt := range []struct {
		name        string
		replicas    int64
		annotations map[string]string
		clusters    []string
		capacity    map[string]int64
		want        map[string]int64
		unplaced    int64
	}{
		{name: "no preferences: even", replicas: 9, clusters: three,
			want: map[string]int64{"cluster1": 3, "cluster2": 3, "cluster3": 3}},
		{name: "weights", replicas: 6, clusters: three,
			annotations: map[string]string{deployments.Annotation: `{"clusters":{"cluster2":{"weight":1},"cluster3":{"weight":2}}}`},
			want:        map[string]int64{"cluster1": 0, "cluster2": 2, "cluster3": 4}},
		{name: "minimums", replicas: 8, clusters: three,
			annotations: map[string]string{deployments.Annotation: `{"clusters":{"cluster1":{"weight":100},"cluster2":{"minReplicas":3},"cluster3":{"minReplicas":4}}}`},
			want:        map[string]int64{"cluster1": 1, "cluster2": 3, "cluster3": 4}},
		{name: "only Ready clusters take part", replicas: 9, clusters: []string{"cluster1", "cluster2"},
			want: map[string]int64{"cluster1": 4, "cluster2": 5}},
		{name: "without rebalance a cluster that was away gets nothing back", replicas: 9, clusters: three,
			annotations: map[string]string{federationv1beta1.ReplicaPlanAnnotation: `{"replicas":{"cluster1":5,"cluster2":4}}`},
			want:        map[string]int64{"cluster1": 5, "cluster2": 4, "cluster3": 0}},
		{name: "with rebalance it does", replicas: 9, clusters: three,
			annotations: map[string]string{federationv1beta1.ReplicaPlanAnnotation: `{"replicas":{"cluster1":5,"cluster2":4}}`,
				deployments.Annotation: `{"rebalance":true,"clusters":{"*":{"weight":1}}}`},
			want: map[string]int64{"cluster1": 3, "cluster2": 3, "cluster3": 3}},
		{name: "capacity sends the surplus elsewhere", replicas: 15, clusters: three,
			annotations: map[string]string{federationv1beta1.ReplicaPlanAnnotation: `{"replicas":{"cluster1":3,"cluster2":3,"cluster3":3}}`},
			capacity:    map[string]int64{"cluster2": 3},
			want:        map[string]int64{"cluster1": 6, "cluster2": 3, "cluster3": 6}},
		{name: "all weights zero leaves replicas unplaced", replicas: 4, clusters: three,
			annotations: map[string]string{deployments.Annotation: `{"clusters":{"*":{"weight":0}}}`},
			want:        map[string]int64{"cluster1": 0, "cluster2": 0, "cluster3": 0}, unplaced: 4},
		{name: "unusable preferences: even", replicas: 3, clusters: three,
			annotations: map[string]string{deployments.Annotation: `{"clusters":`},
			want:        map[string]int64{"cluster1": 1, "cluster2": 1, "cluster3": 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Fed: workload("Deployment", map[string]any{"replicas": tt.replicas}, tt.annotations), Clusters: tt.clusters}
			if tt.capacity != nil {
				in.Capacity = func(cluster string, _ int64) (int64, bool) {
					n, ok := tt.capacity[cluster]
					return n, ok
				}
			}
			res := Divide(deployments, in)
			assert.Equal(t, Plan{"replicas": tt.want}, res.Plan)
			assert.Equal(t, tt.unplaced, res.Unplaced["replicas"])
			_, bad := tt.annotations[deployments.Annotation]
			assert.Equal(t, bad && tt.name == "unusable preferences: even", res.BadPreferences != nil)
		})
	}
}

func TestPlanReplicasOfAJob(t *testing.T) {
	jobs := federatedtypes.ByName("jobs").Replicas
	three := []string{"cluster1", "cluster2", "cluster3"}
	res := Divide(jobs, Input{Fed: workload("Job", map[string]any{"parallelism": int64(3), "completions": int64(6)}, nil), Clusters: three})
	assert.Equal(t, Plan{
		"parallelism": {"cluster1": 1, "cluster2": 1, "cluster3": 1},
		"completions": {"cluster1": 2, "cluster2": 2, "cluster3": 2},
	}, res.Plan)

	res = Divide(jobs, Input{Fed: workload("Job", map[string]any{"parallelism": int64(1), "completions": int64(6)}, nil), Clusters: three})
	assert.Equal(t, map[string]int64{"cluster1": 1, "cluster2": 1, "cluster3": 1}, res.Plan["parallelism"],
		"every cluster with completions to run gets a pod at a time")

	previous := map[string]string{federationv1beta1.ReplicaPlanAnnotation: `{"completions":{"cluster1":2,"cluster2":2,"cluster3":2},"parallelism":{"cluster1":1,"cluster2":1,"cluster3":1}}`}
	res = Divide(jobs, Input{Fed: workload("Job", map[string]any{"parallelism": int64(3), "completions": int64(6)}, previous),
		Clusters: []string{"cluster1", "cluster2"}})
	assert.Equal(t, map[string]int64{"cluster1": 2, "cluster2": 2, "cluster3": 2}, res.Plan["completions"],
		"completions are immutable in the members: divided once")
	assert.Equal(t, int64(3), res.Plan["parallelism"]["cluster1"]+res.Plan["parallelism"]["cluster2"], "parallelism is re-planned")
	assert.NotContains(t, res.Plan["parallelism"], "cluster3")
}

func TestReplicaChangeShowsWhatEachHPAClusterRuns(t *testing.T) {
	assert.Equal(t, "cluster1=3 cluster2=2", Change{HPA: map[string]int64{"cluster2": 2, "cluster1": 3}}.String())
}

func TestPlanString(t *testing.T) {
	assert.Equal(t, "c1=3 c2=0", Plan{"replicas": {"c2": 0, "c1": 3}}.String())
	assert.Equal(t, "completions: c1=2; parallelism: c1=1", Plan{"parallelism": {"c1": 1}, "completions": {"c1": 2}}.String())
}

func TestDivideHPA(t *testing.T) {
	hpa := func(minReplicas, maxReplicas int64) *unstructured.Unstructured {
		return workload("HorizontalPodAutoscaler", map[string]any{"minReplicas": minReplicas, "maxReplicas": maxReplicas}, nil)
	}
	placed := map[string]bool{"c1": true, "c2": true, "c3": true}
	target := workload("Deployment", map[string]any{"replicas": int64(6)}, map[string]string{federationv1beta1.ReplicaPlanAnnotation: `{"replicas":{"c1":3,"c2":3,"c3":0}}`})
	assert.Equal(t, Plan{"minReplicas": {"c1": 2, "c2": 2}, "maxReplicas": {"c1": 5, "c2": 5}}, DivideHPA(hpa(4, 10), target, placed),
		"only where the target runs")

	plain := workload("Deployment", map[string]any{"replicas": int64(6)}, nil)
	plan := DivideHPA(hpa(1, 2), plain, placed)
	assert.Len(t, plan["maxReplicas"], 2, "a cluster whose maximum would be 0 gets no HPA")
	for c, n := range plan["minReplicas"] {
		assert.Equal(t, int64(1), n, "an HPA's minimum is at least 1 (%s)", c)
		assert.Equal(t, int64(1), plan["maxReplicas"][c])
	}
}

func TestFollowHPA(t *testing.T) {
	member := func(replicas int64) *unstructured.Unstructured {
		return workload("Deployment", map[string]any{"replicas": replicas}, nil)
	}
	hpaOn := func(clusters string) map[string]string {
		return map[string]string{federationv1beta1.HPATargetClustersAnnotation: `{"Names":[` + clusters + `]}`,
			federationv1beta1.ReplicaPlanAnnotation: `{"replicas":{"cluster1":4,"cluster2":4,"cluster3":4}}`}
	}
	three := []string{"cluster1", "cluster2", "cluster3"}
	for _, tt := range []struct {
		name        string
		annotations map[string]string
		members     map[string]*unstructured.Unstructured
		want        int64
		changed     bool
	}{
		{name: "without an HPA the user's count stands", annotations: map[string]string{},
			members: map[string]*unstructured.Unstructured{"cluster1": member(1), "cluster2": member(1), "cluster3": member(1)},
			want:    12},
		{name: "the sum of what the HPAs run", annotations: hpaOn(`"cluster1","cluster2","cluster3"`),
			members: map[string]*unstructured.Unstructured{"cluster1": member(2), "cluster2": member(3), "cluster3": member(3)},
			want:    8, changed: true},
		{name: "a cluster without an HPA counts with its plan", annotations: hpaOn(`"cluster1","cluster2"`),
			members: map[string]*unstructured.Unstructured{"cluster1": member(6), "cluster2": member(6), "cluster3": member(1)},
			want:    16, changed: true},
		{name: "an HPA cluster whose copy is unknown: nothing changes", annotations: hpaOn(`"cluster1","cluster2","cluster3"`),
			members: map[string]*unstructured.Unstructured{"cluster1": member(2), "cluster2": member(3)},
			want:    12},
		{name: "already right", annotations: hpaOn(`"cluster1","cluster2","cluster3"`),
			members: map[string]*unstructured.Unstructured{"cluster1": member(4), "cluster2": member(4), "cluster3": member(4)},
			want:    12},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fed := workload("Deployment", map[string]any{"replicas": int64(12)}, tt.annotations)
			got, change := FollowHPA(Input{Fed: fed, Clusters: three, Members: tt.members})
			replicas, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas")
			assert.Equal(t, tt.want, replicas)
			if !tt.changed {
				assert.Nil(t, change)
				assert.Same(t, fed, got, "unchanged: the same object")
				return
			}
			require.NotNil(t, change)
			runs := map[string]int64{}
			for c := range HPAClusters(tt.annotations) {
				runs[c], _, _ = unstructured.NestedInt64(tt.members[c].Object, "spec", "replicas")
			}
			assert.Equal(t, Change{From: 12, To: tt.want, HPA: runs}, *change)
			original, _, _ := unstructured.NestedInt64(fed.Object, "spec", "replicas")
			assert.EqualValues(t, 12, original, "the cached object is not touched")
		})
	}
}
