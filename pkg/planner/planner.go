// Package planner divides a workload's replicas over member clusters with
// Federation v1's algorithm: every cluster first gets its minReplicas, then
// (unless rebalancing) keeps what already runs there, and the rest is shared
// in proportion to weight, capped by maxReplicas and by the cluster's
// estimated capacity. Replicas no cluster can take within capacity are
// reported as overflow on the clusters that wanted them, to be placed there
// anyway, and as Unplaced when even that is not possible.
package planner

import (
	"hash/fnv"
	"math"
	"math/bits"
	"sort"
)

// Wildcard is the preference key that applies to every cluster without an
// entry of its own.
const Wildcard = "*"

// ClusterPreference is what a workload asks of one cluster.
type ClusterPreference struct {
	// MinReplicas the cluster gets before any weight is considered.
	MinReplicas int64
	// MaxReplicas caps the cluster; nil means no cap.
	MaxReplicas *int64
	// Weight is the cluster's share of what is left after the minimums.
	Weight int64
}

// Preferences are a workload's replica allocation preferences.
type Preferences struct {
	// Rebalance lets replicas move away from where they already run.
	Rebalance bool
	// Clusters by name, or Wildcard.
	Clusters map[string]ClusterPreference
}

// EvenSpread is the preference of a workload without an annotation.
func EvenSpread() Preferences {
	return Preferences{Clusters: map[string]ClusterPreference{Wildcard: {Weight: 1}}}
}

// Input is what the plan is made from.
type Input struct {
	// Replicas to place.
	Replicas int64
	// Clusters that may run them: Ready and selected.
	Clusters []string
	// Current replicas per cluster; used only when not rebalancing.
	Current map[string]int64
	// Capacity per cluster where pods have stayed unschedulable; absent means unlimited.
	Capacity map[string]int64
	// Key of the workload (namespace/name); it varies the order of
	// equal-weight clusters so that the same clusters are not always favoured.
	Key string
}

// Plan is where the replicas go.
type Plan struct {
	// Replicas per cluster within capacity; every input cluster has an entry.
	Replicas map[string]int64
	// Overflow per cluster: replicas beyond its capacity that it would have
	// taken, to be placed there anyway because no other cluster can.
	Overflow map[string]int64
	// Unplaced replicas: neither a share nor overflow anywhere (all weights
	// zero, or every cluster at its maxReplicas).
	Unplaced int64
}

// Desired is what each cluster should run: its share plus its overflow.
func (p Plan) Desired() map[string]int64 {
	out := make(map[string]int64, len(p.Replicas))
	for c, n := range p.Replicas {
		out[c] = n + p.Overflow[c]
	}
	return out
}

// candidate is a cluster taking part in the plan, with its preference.
type candidate struct {
	name string
	hash uint32
	ClusterPreference
}

// Plan divides in.Replicas over in.Clusters.
func (p Preferences) Plan(in Input) Plan {
	plan := Plan{Replicas: make(map[string]int64, len(in.Clusters)), Overflow: map[string]int64{}}
	ordered := p.candidates(in, plan.Replicas)
	candidates := ordered
	remaining := in.Replicas

	capped := func(c *candidate, n int64) int64 {
		if capacity, limited := in.Capacity[c.name]; limited && n > capacity {
			return capacity
		}
		return n
	}

	// 1. Minimums, in weight order, bounded by what is left and by capacity.
	for _, c := range candidates {
		want := min(c.MinReplicas, remaining)
		n := capped(c, want)
		if n < want {
			plan.Overflow[c.name] = want - n
		}
		plan.Replicas[c.name] = n
		remaining -= n
	}

	// 2. Without rebalancing, replicas stay where they run (up to max and
	// capacity). They are "preallocated": the weighted share below consumes
	// them first instead of adding new replicas.
	preallocated := map[string]int64{}
	if !p.Rebalance {
		for _, c := range candidates {
			planned := plan.Replicas[c.name]
			target := in.Current[c.name]
			if c.MaxReplicas != nil {
				target = min(target, *c.MaxReplicas)
			}
			target = capped(c, target)
			if extra := min(target-planned, remaining); extra > 0 {
				plan.Replicas[c.name] += extra
				preallocated[c.name] = extra
				remaining -= extra
			}
		}
	}

	// 3. Share the rest by weight, rounding up, until nothing is left or no
	// cluster takes more. Full clusters drop out of later rounds.
	for progress := true; progress && remaining > 0; {
		progress = false
		var weights int64
		for _, c := range candidates {
			weights += c.Weight
		}
		if weights == 0 {
			break
		}
		skipPreallocated(candidates, remaining, weights, preallocated)
		round := remaining
		open := candidates[:0:0]
		for _, c := range candidates {
			share := min(ceilShare(round, c.Weight, weights), remaining)
			// A share first covers replicas preallocated in step 2.
			used := min(share, preallocated[c.name])
			if used > 0 {
				preallocated[c.name] -= used
				progress = true
			}
			start := plan.Replicas[c.name]
			total := start + share - used
			full := false
			if c.MaxReplicas != nil && total > *c.MaxReplicas {
				total, full = *c.MaxReplicas, true
			}
			if capacity, limited := in.Capacity[c.name]; limited && total > capacity {
				// The wish beyond capacity includes any minimum that overflowed.
				plan.Overflow[c.name] = max(plan.Overflow[c.name], total-capacity)
				total, full = capacity, true
			}
			if total > start {
				progress = true
			}
			remaining -= total - start
			plan.Replicas[c.name] = total
			if !full {
				open = append(open, c)
			}
		}
		candidates = open
	}

	// Overflow only matters for replicas that found no place, and never adds
	// up to more than those (v1 trimmed each cluster's alone, so the sum
	// could exceed the replicas asked for).
	var overflow int64
	for _, c := range ordered {
		n := min(plan.Overflow[c.name], remaining-overflow)
		if n <= 0 {
			delete(plan.Overflow, c.name)
			continue
		}
		plan.Overflow[c.name] = n
		overflow += n
	}
	plan.Unplaced = remaining - overflow
	return plan
}

// skipPreallocated takes at once the rounds of step 3 in which every share
// goes to replicas preallocated in step 2: such a round changes nothing but
// what is left preallocated, so the next one is the same. One by one they
// would take as many rounds as replicas run (billions for a large workload
// grown by one).
func skipPreallocated(candidates []*candidate, remaining, weights int64, preallocated map[string]int64) {
	shares := make([]int64, len(candidates))
	rounds := int64(-1)
	for i, c := range candidates {
		shares[i] = min(ceilShare(remaining, c.Weight, weights), remaining)
		if shares[i] > 0 {
			if n := preallocated[c.name] / shares[i]; rounds < 0 || n < rounds {
				rounds = n
			}
		}
	}
	if rounds <= 0 {
		return
	}
	for i, c := range candidates {
		if shares[i] > 0 {
			preallocated[c.name] -= rounds * shares[i]
		}
	}
}

// MaxWeight bounds a weight: a heavier one counts as this much. Validation
// refuses larger ones; with this bound the sum of the weights cannot
// overflow.
const MaxWeight = math.MaxInt32

// bounded keeps a preference within what the arithmetic handles, whatever
// was validated: weights within 0..MaxWeight, minimum and maximum not
// negative.
func bounded(p ClusterPreference) ClusterPreference {
	p.Weight = min(max(p.Weight, 0), MaxWeight)
	p.MinReplicas = max(p.MinReplicas, 0)
	if p.MaxReplicas != nil && *p.MaxReplicas < 0 {
		p.MaxReplicas = new(int64)
	}
	return p
}

// ceilShare is ⌈n·weight/weights⌉ in 128 bits, so that no product
// overflows; 0 ≤ n, 0 ≤ weight ≤ weights and weights > 0, so the result is
// at most n.
func ceilShare(n, weight, weights int64) int64 {
	hi, lo := bits.Mul64(uint64(n), uint64(weight))
	// hi < weights since weight ≤ weights and n < 2^63.
	q, r := bits.Div64(hi, lo, uint64(weights))
	if r != 0 {
		q++
	}
	return int64(q)
}

// candidates returns the clusters that have a preference (their own or the
// wildcard), heaviest first; the others get 0 in replicas.
func (p Preferences) candidates(in Input, replicas map[string]int64) []*candidate {
	var out []*candidate
	for _, name := range in.Clusters {
		pref, ok := p.Clusters[name]
		if !ok {
			pref, ok = p.Clusters[Wildcard]
		}
		if !ok {
			replicas[name] = 0
			continue
		}
		pref = bounded(pref)
		h := fnv.New32()
		h.Write([]byte(name))
		h.Write([]byte(in.Key))
		out = append(out, &candidate{name: name, hash: h.Sum32(), ClusterPreference: pref})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Weight != b.Weight {
			return a.Weight > b.Weight
		}
		if a.hash != b.hash {
			return a.hash < b.hash
		}
		return a.name < b.name
	})
	return out
}
