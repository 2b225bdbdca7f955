package planner

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func ptr(n int64) *int64 { return &n }

func TestPlan(t *testing.T) {
	tests := []struct {
		name  string
		prefs Preferences
		in    Input
		want  map[string]int64
		// overflow and unplaced are checked when set.
		overflow map[string]int64
		unplaced int64
	}{
		{
			name:  "v1 e2e: weights c1:1 c2:2 and no wildcard leave c0 empty",
			prefs: Preferences{Clusters: map[string]ClusterPreference{"c1": {Weight: 1}, "c2": {Weight: 2}}},
			in:    Input{Replicas: 3, Clusters: []string{"c0", "c1", "c2"}},
			want:  map[string]int64{"c0": 0, "c1": 1, "c2": 2},
		},
		{
			name:  "minimums come before weights",
			prefs: Preferences{Clusters: map[string]ClusterPreference{"a": {MinReplicas: 5}, Wildcard: {Weight: 1}}},
			in:    Input{Replicas: 6, Clusters: []string{"a", "b"}},
			want:  map[string]int64{"a": 5, "b": 1},
		},
		{
			name: "when minimums exceed the total the heavier cluster gets its minimum first",
			prefs: Preferences{Clusters: map[string]ClusterPreference{
				"a": {MinReplicas: 5, Weight: 2}, "b": {MinReplicas: 5, Weight: 1}}},
			in:   Input{Replicas: 7, Clusters: []string{"b", "a"}},
			want: map[string]int64{"a": 5, "b": 2},
		},
		{
			name:  "a maximum caps a cluster and the rest flows on",
			prefs: Preferences{Clusters: map[string]ClusterPreference{"a": {MaxReplicas: ptr(2), Weight: 10}, Wildcard: {Weight: 1}}},
			in:    Input{Replicas: 10, Clusters: []string{"a", "b"}},
			want:  map[string]int64{"a": 2, "b": 8},
		},
		{
			name:  "weights share proportionally",
			prefs: Preferences{Clusters: map[string]ClusterPreference{"a": {Weight: 3}, "b": {Weight: 1}}},
			in:    Input{Replicas: 8, Clusters: []string{"a", "b"}},
			want:  map[string]int64{"a": 6, "b": 2},
		},
		{
			name:  "without rebalance replicas stay where they run",
			prefs: EvenSpread(),
			in:    Input{Replicas: 10, Clusters: []string{"a", "b"}, Current: map[string]int64{"a": 10}},
			want:  map[string]int64{"a": 10, "b": 0},
		},
		{
			name:  "with rebalance they spread again",
			prefs: Preferences{Rebalance: true, Clusters: map[string]ClusterPreference{Wildcard: {Weight: 1}}},
			in:    Input{Replicas: 10, Clusters: []string{"a", "b"}, Current: map[string]int64{"a": 10}},
			want:  map[string]int64{"a": 5, "b": 5},
		},
		{
			name:  "kept replicas respect the maximum",
			prefs: Preferences{Clusters: map[string]ClusterPreference{"a": {MaxReplicas: ptr(4), Weight: 1}, Wildcard: {Weight: 1}}},
			in:    Input{Replicas: 10, Clusters: []string{"a", "b"}, Current: map[string]int64{"a": 10}},
			want:  map[string]int64{"a": 4, "b": 6},
		},
		{
			name:  "scaling down without rebalance keeps the surviving replicas in place",
			prefs: EvenSpread(),
			in:    Input{Replicas: 4, Clusters: []string{"a", "b"}, Current: map[string]int64{"a": 6, "b": 0}},
			want:  map[string]int64{"a": 4, "b": 0},
		},
		{
			name:     "limited capacity sends the surplus elsewhere",
			prefs:    EvenSpread(),
			in:       Input{Replicas: 10, Clusters: []string{"a", "b"}, Capacity: map[string]int64{"a": 2}},
			want:     map[string]int64{"a": 2, "b": 8},
			overflow: map[string]int64{},
		},
		{
			name: "what no cluster can take overflows onto the clusters that wanted it",
			prefs: Preferences{Clusters: map[string]ClusterPreference{
				"b": {MaxReplicas: ptr(3), Weight: 1}, Wildcard: {Weight: 1}}},
			in:       Input{Replicas: 10, Clusters: []string{"a", "b"}, Capacity: map[string]int64{"a": 2}},
			want:     map[string]int64{"a": 2, "b": 3},
			overflow: map[string]int64{"a": 3},
			unplaced: 2,
		},
		{
			name:     "a minimum beyond capacity overflows",
			prefs:    Preferences{Clusters: map[string]ClusterPreference{"a": {MinReplicas: 4, MaxReplicas: ptr(4)}}},
			in:       Input{Replicas: 4, Clusters: []string{"a"}, Capacity: map[string]int64{"a": 1}},
			want:     map[string]int64{"a": 1},
			overflow: map[string]int64{"a": 3},
		},
		{
			name:     "all weights zero leave replicas unplaced, not silently dropped",
			prefs:    Preferences{Clusters: map[string]ClusterPreference{Wildcard: {Weight: 0}}},
			in:       Input{Replicas: 5, Clusters: []string{"a", "b"}},
			want:     map[string]int64{"a": 0, "b": 0},
			unplaced: 5,
		},
		{
			name:     "no cluster at all",
			prefs:    EvenSpread(),
			in:       Input{Replicas: 5},
			want:     map[string]int64{},
			unplaced: 5,
		},
		{
			name:  "zero replicas",
			prefs: EvenSpread(),
			in:    Input{Replicas: 0, Clusters: []string{"a"}},
			want:  map[string]int64{"a": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.prefs.Plan(tt.in)
			assert.Equal(t, tt.want, got.Replicas)
			if tt.overflow != nil {
				assert.Equal(t, tt.overflow, got.Overflow)
			}
			assert.Equal(t, tt.unplaced, got.Unplaced)
			checkInvariants(t, tt.prefs, tt.in, got)
		})
	}
}

func TestEvenSpreadOfFiftyOverThree(t *testing.T) {
	got := EvenSpread().Plan(Input{Replicas: 50, Clusters: []string{"a", "b", "c"}, Key: "default/web"})
	var sum int64
	for c, n := range got.Replicas {
		assert.Contains(t, []int64{16, 17}, n, "cluster %s", c)
		sum += n
	}
	assert.Equal(t, int64(50), sum)
}

func TestTiesFavourDifferentClustersForDifferentObjects(t *testing.T) {
	winners := map[string]int{}
	for i := 0; i < 20; i++ {
		in := Input{Replicas: 1, Clusters: []string{"a", "b"}, Key: fmt.Sprintf("default/web-%d", i)}
		plan := EvenSpread().Plan(in)
		for c, n := range plan.Replicas {
			if n == 1 {
				winners[c]++
			}
		}
		assert.Equal(t, plan, EvenSpread().Plan(in), "the same object always gets the same plan")
	}
	assert.Positive(t, winners["a"], "a never won a tie")
	assert.Positive(t, winners["b"], "b never won a tie")
}

func TestDesiredAddsOverflow(t *testing.T) {
	p := Plan{Replicas: map[string]int64{"a": 2, "b": 3}, Overflow: map[string]int64{"a": 3}}
	assert.Equal(t, map[string]int64{"a": 5, "b": 3}, p.Desired())
}
