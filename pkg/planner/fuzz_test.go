package planner

import (
	"fmt"
	"testing"
)

// FuzzPlan checks the invariants on random inputs:
//
//	go test ./pkg/planner -fuzz=FuzzPlan -fuzztime=60s
//
// The seeds below run as ordinary tests.
func FuzzPlan(f *testing.F) {
	f.Add(int64(10), []byte{1, 0, 0, 1, 0, 0, 2, 0, 0}, false, "default/web")
	f.Add(int64(100), []byte{3, 5, 9, 2, 0, 200, 0, 3, 1, 7, 7, 7}, true, "x")
	f.Add(int64(7), []byte{0, 0, 0, 0, 0, 0}, false, "")
	f.Add(int64(1000), []byte{255, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, false, "ns/big")
	f.Fuzz(func(t *testing.T, replicas int64, spec []byte, rebalance bool, key string) {
		if replicas < 0 || replicas > 100000 {
			t.Skip()
		}
		prefs, in := decode(replicas, spec, rebalance, key, fuzzValue)
		checkInvariants(t, prefs, in, prefs.Plan(in))
	})
}

// fuzzValue is FuzzPlan's value of a cluster's field (0 weight, 1 min,
// 2 max, 3 current, 4 capacity) from its byte: small weights and minimums.
func fuzzValue(field int, b byte) int64 {
	switch field {
	case 0:
		return int64(b % 8)
	case 1:
		return int64(b % 32)
	}
	return int64(b)
}

// decode turns fuzz bytes into preferences and an input: each cluster takes
// six bytes (flags, weight, min, max, current, capacity), whose values
// value draws.
func decode(replicas int64, spec []byte, rebalance bool, key string, value func(field int, b byte) int64) (Preferences, Input) {
	prefs := Preferences{Rebalance: rebalance, Clusters: map[string]ClusterPreference{}}
	in := Input{Replicas: replicas, Key: key, Current: map[string]int64{}, Capacity: map[string]int64{}}
	for i := 0; i+6 <= len(spec) && i/6 < 8; i += 6 {
		name := fmt.Sprintf("c%d", i/6)
		flags, weight, lo, hi, current, capacity := spec[i], value(0, spec[i+1]), value(1, spec[i+2]), value(2, spec[i+3]), value(3, spec[i+4]), value(4, spec[i+5])
		in.Clusters = append(in.Clusters, name)
		pref := ClusterPreference{Weight: weight, MinReplicas: lo}
		if flags&1 != 0 {
			hi = max(hi, lo) // validation rejects max < min
			pref.MaxReplicas = &hi
		}
		switch {
		case flags&2 != 0:
			prefs.Clusters[Wildcard] = pref
		case flags&4 == 0:
			prefs.Clusters[name] = pref
		}
		if flags&8 != 0 {
			in.Current[name] = current
		}
		if flags&16 != 0 {
			in.Capacity[name] = capacity
		}
	}
	return prefs, in
}
