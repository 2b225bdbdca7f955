package replicaplan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// An Indexed Job goes whole to one cluster: each copy would run indexes
// 0..completions-1 again.
func TestAnIndexedJobIsNotDivided(t *testing.T) {
	jobs := federatedtypes.ByName("jobs").Replicas
	three := []string{"cluster1", "cluster2", "cluster3"}
	indexed := func(annotations map[string]string) *unstructured.Unstructured {
		return workload("Job", map[string]any{"completionMode": "Indexed", "completions": int64(6), "parallelism": int64(3)}, annotations)
	}
	all := func(cluster string) Plan {
		return Plan{"completions": {cluster: 6}, "parallelism": {cluster: 3}}
	}
	copyIn := func(cluster string) map[string]*unstructured.Unstructured {
		return map[string]*unstructured.Unstructured{cluster: workload("Job", map[string]any{"completions": int64(6)}, nil)}
	}
	for _, tt := range []struct {
		name        string
		annotations map[string]string
		clusters    []string
		away        []string
		members     map[string]*unstructured.Unstructured
		want        Plan
		why         string
		chosen      bool
		ignored     string
		unplaced    map[string]int64
	}{
		{name: "no preferences: the first cluster by name", clusters: []string{"cluster3", "cluster2", "cluster1"},
			want: all("cluster1"), why: "the first by name, without preferences", chosen: true},
		{name: "the highest weight", clusters: three,
			annotations: map[string]string{jobs.Annotation: `{"clusters":{"cluster1":{"weight":1},"cluster3":{"weight":2}}}`},
			want:        all("cluster3"), why: "the highest weight in the preferences", chosen: true},
		{name: "equal weights: the first by name", clusters: three,
			annotations: map[string]string{jobs.Annotation: `{"clusters":{"cluster2":{"weight":2},"cluster3":{"weight":2}}}`},
			want:        all("cluster2"), why: "the first by name of the clusters with the highest weight", chosen: true},
		{name: "maxReplicas 0 excludes a cluster", clusters: three,
			annotations: map[string]string{jobs.Annotation: `{"clusters":{"cluster1":{"maxReplicas":0,"weight":5},"*":{"weight":1}}}`},
			want:        all("cluster2"), why: "the first by name of the clusters with the highest weight", chosen: true},
		{name: "preferences that divide it are ignored", clusters: three,
			annotations: map[string]string{jobs.Annotation: `{"clusters":{"cluster1":{"minReplicas":3},"cluster2":{"minReplicas":3,"maxReplicas":3}}}`},
			want:        all("cluster1"), why: "the highest minReplicas in the preferences", chosen: true, ignored: "minReplicas in cluster1, cluster2"},
		{name: "no cluster allowed: unplaced", clusters: three,
			annotations: map[string]string{jobs.Annotation: `{"clusters":{"*":{"weight":0}}}`},
			want:        Plan{"completions": {}, "parallelism": {}}, chosen: true, unplaced: map[string]int64{"completions": 6, "parallelism": 3}},
		{name: "kept when a cluster that sorts first comes", clusters: append([]string{"cluster0"}, three...),
			annotations: map[string]string{federationv1beta1.ReplicaPlanAnnotation: all("cluster2").Encode()},
			want:        all("cluster2"), why: "kept"},
		{name: "kept, and not moved, while its cluster is away", clusters: []string{"cluster1", "cluster3"}, away: []string{"cluster2"},
			annotations: map[string]string{federationv1beta1.ReplicaPlanAnnotation: all("cluster2").Encode()},
			want:        all("cluster2"), why: "kept"},
		{name: "chosen again when its cluster is no longer selected", clusters: []string{"cluster1", "cluster3"},
			annotations: map[string]string{federationv1beta1.ReplicaPlanAnnotation: all("cluster2").Encode()},
			want:        all("cluster1"), why: "the first by name, without preferences", chosen: true},
		{name: "a copy found without a plan stays where it is", clusters: three, members: copyIn("cluster3"),
			want: all("cluster3"), why: "its copy is there", chosen: true},
		{name: "divided before: stays divided", clusters: three,
			annotations: map[string]string{federationv1beta1.ReplicaPlanAnnotation: `{"completions":{"cluster1":3,"cluster2":3},"parallelism":{"cluster1":2,"cluster2":1}}`},
			want:        Plan{"completions": {"cluster1": 3, "cluster2": 3}, "parallelism": {"cluster1": 2, "cluster2": 1, "cluster3": 0}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := Divide(jobs, Input{Fed: indexed(tt.annotations), Clusters: tt.clusters, Away: tt.away, Members: tt.members})
			assert.Equal(t, tt.want, res.Plan)
			if tt.why == "" && !tt.chosen {
				assert.Nil(t, res.Whole, "divided")
				return
			}
			if assert.NotNil(t, res.Whole) {
				assert.Equal(t, tt.why, res.Whole.Why)
				assert.Equal(t, tt.chosen, res.Whole.Chosen)
				assert.Equal(t, tt.ignored, res.Whole.Ignored)
			}
			if tt.unplaced == nil {
				tt.unplaced = map[string]int64{}
			}
			assert.Equal(t, tt.unplaced, res.Unplaced)
		})
	}

	// A Job that is not Indexed is still divided.
	res := Divide(jobs, Input{Fed: workload("Job", map[string]any{"completions": int64(6), "parallelism": int64(3)}, nil), Clusters: three})
	assert.Nil(t, res.Whole)
	assert.Equal(t, Plan{"completions": {"cluster1": 2, "cluster2": 2, "cluster3": 2}, "parallelism": {"cluster1": 1, "cluster2": 1, "cluster3": 1}}, res.Plan)
}
