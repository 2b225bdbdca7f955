package planner

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// unlimited stands for a cluster without max or capacity.
const unlimited = int64(1) << 62

// checkInvariants asserts what every plan must satisfy, whatever the input:
// replicas are conserved, max and capacity hold, minimums are honoured when
// they all fit, and everything is placed when max and capacity allow.
func checkInvariants(t *testing.T, prefs Preferences, in Input, got Plan) {
	t.Helper()
	type bounds struct{ ceiling, min, room int64 }
	clusters := map[string]bounds{}
	var minSum, room int64
	for _, c := range in.Clusters {
		pref, has := prefs.Clusters[c]
		if !has {
			pref, has = prefs.Clusters[Wildcard]
		}
		if !has {
			continue
		}
		ceiling := unlimited
		if pref.MaxReplicas != nil {
			ceiling = *pref.MaxReplicas
		}
		if capacity, limited := in.Capacity[c]; limited {
			ceiling = min(ceiling, capacity)
		}
		b := bounds{ceiling: ceiling, min: min(pref.MinReplicas, ceiling), room: ceiling}
		if pref.Weight == 0 { // only its minimum, or what it keeps running
			kept := pref.MinReplicas
			if !prefs.Rebalance {
				kept = max(kept, in.Current[c])
			}
			b.room = min(kept, ceiling)
		}
		clusters[c] = b
		minSum += b.min
		room += b.room
	}

	var placed, overflow int64
	for _, c := range in.Clusters {
		n, ok := got.Replicas[c]
		if !assert.True(t, ok, "cluster %s has no entry", c) {
			continue
		}
		assert.GreaterOrEqual(t, n, int64(0), "cluster %s", c)
		assert.GreaterOrEqual(t, got.Overflow[c], int64(0), "overflow of %s", c)
		placed += n
		overflow += got.Overflow[c]
		b, has := clusters[c]
		if !has {
			assert.Zero(t, n+got.Overflow[c], "cluster %s has no preference", c)
			continue
		}
		assert.LessOrEqual(t, n, b.ceiling, "max and capacity of %s", c)
		if max := prefs.Clusters[c].MaxReplicas; max != nil {
			assert.LessOrEqual(t, n+got.Overflow[c], *max, "max of %s with overflow", c)
		}
		if minSum <= in.Replicas {
			assert.GreaterOrEqual(t, n, b.min, "minimum of %s, when all minimums fit", c)
		}
	}
	assert.GreaterOrEqual(t, got.Unplaced, int64(0))
	assert.Equal(t, in.Replicas, placed+overflow+got.Unplaced, "every replica is placed, overflowed or unplaced, once")
	if in.Replicas <= room {
		assert.Equal(t, in.Replicas, placed, "there was room for every replica within max and capacity")
	}
}
