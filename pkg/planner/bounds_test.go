package planner

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The largest values validation lets through (replica counts are int32)
// are planned without overflow: every replica is placed.
func TestPlanWithTheLargestValues(t *testing.T) {
	const top = int64(math.MaxInt32)
	clusters := []string{"c1", "c2", "c3"}
	cases := []struct {
		name  string
		prefs Preferences
		// want is checked with rebalance, when what runs does not stay.
		want map[string]int64
	}{
		{
			name:  "every weight at the top",
			prefs: Preferences{Clusters: map[string]ClusterPreference{Wildcard: {Weight: top}}},
		},
		{
			name: "one weight at the top, one of 1",
			prefs: Preferences{Clusters: map[string]ClusterPreference{
				"c1": {Weight: top}, "c2": {Weight: 1}}},
		},
		{
			name: "minimums and maximums at the top",
			prefs: Preferences{Clusters: map[string]ClusterPreference{
				Wildcard: {MinReplicas: top, MaxReplicas: ptr(top), Weight: top}}},
		},
		{
			name: "v1's 2^62 weights, refused by validation, still place everything",
			prefs: Preferences{Clusters: map[string]ClusterPreference{
				"c1": {Weight: 1 << 62}, "c2": {Weight: 1 << 62}, "c3": {Weight: 1}}},
		},
		{
			name: "negative values, refused by validation, count as zero",
			prefs: Preferences{Clusters: map[string]ClusterPreference{
				"c1": {MinReplicas: -5, Weight: -1}, "c2": {MaxReplicas: ptr(-1), Weight: 1}, "c3": {Weight: 1}}},
			want: map[string]int64{"c1": 0, "c2": 0, "c3": top},
		},
	}
	for _, c := range cases {
		for _, rebalance := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, rebalance %v", c.name, rebalance), func(t *testing.T) {
				c.prefs.Rebalance = rebalance
				in := Input{Replicas: top, Clusters: clusters, Current: map[string]int64{"c1": top, "c2": top}}
				got := c.prefs.Plan(in)
				var placed int64
				for _, n := range got.Replicas {
					assert.GreaterOrEqual(t, n, int64(0))
					placed += n
				}
				assert.Equal(t, top, placed, "every replica is placed: %v", got.Replicas)
				if c.want != nil && rebalance {
					assert.Equal(t, c.want, got.Replicas)
				}
			})
		}
	}
}

// Shares are proportional even where weight·replicas leaves 64 bits.
func TestCeilShare(t *testing.T) {
	assert.Equal(t, int64(3), ceilShare(8, 3, 8))
	assert.Equal(t, int64(1), ceilShare(1, 1, 3))
	assert.Equal(t, int64(0), ceilShare(5, 0, 3))
	huge := int64(math.MaxInt64)
	assert.Equal(t, huge, ceilShare(huge, huge, huge))
	assert.Equal(t, int64(1)<<62, ceilShare(huge, 1<<62, huge))
	assert.Equal(t, huge/2+1, ceilShare(huge, 1, 2), "half, rounded up")
}

// FuzzPlanExtremes checks the invariants with values drawn from the
// extremes validation allows (0, 1, 2^31-2, 2^31-1):
//
//	go test ./pkg/planner -fuzz=FuzzPlanExtremes -fuzztime=60s
func FuzzPlanExtremes(f *testing.F) {
	f.Add(uint8(3), []byte{1, 3, 0, 3, 3, 3, 2, 3, 3, 3, 0, 0}, false, "ns/a")
	f.Add(uint8(3), []byte{17, 3, 3, 3, 2, 1, 8, 1, 0, 0, 3, 3}, true, "ns/b")
	f.Add(uint8(1), []byte{0, 3, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0}, false, "")
	extremes := []int64{0, 1, math.MaxInt32 - 1, math.MaxInt32}
	f.Fuzz(func(t *testing.T, replicas uint8, spec []byte, rebalance bool, key string) {
		pick := func(_ int, b byte) int64 { return extremes[b%4] }
		prefs, in := decode(pick(0, replicas), spec, rebalance, key, pick)
		checkInvariants(t, prefs, in, prefs.Plan(in))
	})
}

// A workload of 2^31-2 replicas running in one cluster, grown by one, is
// planned at once: step 3 does not take one round per running replica.
func TestGrowingAHugeWorkloadByOne(t *testing.T) {
	const running = int64(math.MaxInt32 - 1)
	prefs := Preferences{Clusters: map[string]ClusterPreference{Wildcard: {Weight: math.MaxInt32}}}
	in := Input{Replicas: running + 1, Clusters: []string{"c1", "c2"}, Current: map[string]int64{"c1": running}}
	got := prefs.Plan(in)
	checkInvariants(t, prefs, in, got)
	assert.Equal(t, running+1, got.Replicas["c1"]+got.Replicas["c2"])
}
