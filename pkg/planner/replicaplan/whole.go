package replicaplan

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/replicapreferences"
)

// Whole is the one cluster that runs a workload which is not divided (an
// Indexed Job: each copy would run the same indexes).
type Whole struct {
	// Cluster runs the whole workload; "" when no cluster may (every
	// cluster excluded by the preferences, or none Ready).
	Cluster string
	// Chosen is set when Cluster was chosen now, not kept from the
	// previous plan.
	Chosen bool
	// Why tells how Cluster was chosen ("kept", "its copy is there", ...).
	Why string
	// Ignored says what of the preferences asked to divide the workload,
	// which was not done; "" when nothing was.
	Ignored string
}

// held are the clusters a plan gives something to.
func held(p Plan) []string {
	set := map[string]bool{}
	for _, counts := range p {
		for c, n := range counts {
			if n > 0 {
				set[c] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// dividedBefore reports a workload already divided over several clusters
// (by a plan made before it was kept whole, or copies in several clusters
// and no plan): its copies run, and what members hold of them cannot
// change, so it stays divided rather than have copies deleted.
func dividedBefore(p Plan, members map[string]*unstructured.Unstructured) bool {
	if p == nil {
		return len(members) > 1
	}
	return len(held(p)) > 1
}

// whole plans a workload that goes whole to one cluster: every field's
// count to that cluster, none to the others. The cluster is kept once
// chosen, while it is selected, also when it is not Ready (its copy keeps
// running there: moving it would run it twice). Else the first cluster by
// name that holds a copy already; else, without preferences, the first
// cluster by name; else the one the preferences favour: the highest
// minReplicas, then the highest weight, then the first by name, among the
// clusters they give anything to (maxReplicas 0 excludes a cluster). Nothing
// of the preferences divides it, and they move nothing once it is chosen.
func whole(rf *federatedtypes.ReplicaFields, in Input, prefs *replicapreferences.Preferences, res Result, previous Plan) Result {
	totals := map[string]int64{}
	for _, f := range rf.Fields {
		if n, found, _ := unstructured.NestedInt64(in.Fed.Object, "spec", f); found {
			totals[f] = n
		}
	}
	w := &Whole{}
	res.Whole = w
	clusters := slices.Sorted(slices.Values(in.Clusters))
	_, asked := in.Fed.GetAnnotations()[rf.Annotation]
	kept := held(previous)
	switch {
	case len(kept) == 1 && (slices.Contains(clusters, kept[0]) || slices.Contains(in.Away, kept[0])):
		w.Cluster, w.Why = kept[0], "kept"
	case len(clusters) == 0:
		w.Chosen = true
	default:
		w.Chosen = true
		if i := slices.IndexFunc(clusters, func(c string) bool { return in.Members[c] != nil }); i >= 0 {
			w.Cluster, w.Why = clusters[i], "its copy is there"
		} else if !asked || res.BadPreferences != nil {
			w.Cluster, w.Why = clusters[0], "the first by name, without preferences"
		} else {
			w.Cluster, w.Why, w.Ignored = favoured(prefs, clusters, totals, rf.Fields)
		}
	}
	for _, f := range rf.Fields {
		n, ok := totals[f]
		if !ok {
			continue
		}
		res.Plan[f] = map[string]int64{}
		switch {
		case w.Cluster != "":
			res.Plan[f][w.Cluster] = n
		case n > 0:
			res.Unplaced[f] = n
		}
	}
	return res
}

// favoured is the cluster the preferences favour for a whole workload,
// how, and what of them asked to divide it (ignored): minimums in several
// clusters, or a maximum under one of the workload's counts.
func favoured(prefs *replicapreferences.Preferences, clusters []string, totals map[string]int64, fields []string) (cluster, why, ignored string) {
	type candidate struct {
		name string
		replicapreferences.ClusterPreferences
	}
	var candidates []candidate
	var minimums []string
	for _, c := range clusters {
		p, ok := prefs.ForCluster(c)
		if !ok || (p.MaxReplicas != nil && *p.MaxReplicas == 0) || (p.Weight == 0 && p.MinReplicas == 0) {
			continue
		}
		candidates = append(candidates, candidate{c, p})
		if p.MinReplicas > 0 {
			minimums = append(minimums, c)
		}
	}
	if len(candidates) == 0 {
		return "", "", ""
	}
	best := slices.MinFunc(candidates, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(b.MinReplicas, a.MinReplicas), cmp.Compare(b.Weight, a.Weight), strings.Compare(a.name, b.name))
	})
	why = "the highest weight in the preferences"
	switch {
	case len(candidates) == 1:
		why = "the only cluster the preferences allow"
	case best.MinReplicas > 0:
		why = "the highest minReplicas in the preferences"
	case slices.IndexFunc(candidates, func(c candidate) bool { return c.name != best.name && c.Weight == best.Weight }) >= 0:
		why = "the first by name of the clusters with the highest weight"
	}
	var asked []string
	if len(minimums) > 1 {
		asked = append(asked, "minReplicas in "+strings.Join(minimums, ", "))
	}
	if best.MaxReplicas != nil {
		for _, f := range fields {
			if n, ok := totals[f]; ok && n > *best.MaxReplicas {
				asked = append(asked, fmt.Sprintf("maxReplicas %d in %s, under its %s %d", *best.MaxReplicas, best.name, f, n))
			}
		}
	}
	return best.name, why, strings.Join(asked, "; ")
}
