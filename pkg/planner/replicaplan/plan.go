package replicaplan

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/planner"
	"github.com/federation-v1/federation/pkg/replicapreferences"
)

// Plan is, per divided field, the count per cluster.
type Plan map[string]map[string]int64

// String shows one field's plan as "cluster1=3 cluster2=3"; the whole plan
// when there are several fields.
func (p Plan) String() string {
	var parts []string
	for _, f := range slices.Sorted(maps.Keys(p)) {
		var counts []string
		for _, c := range slices.Sorted(maps.Keys(p[f])) {
			counts = append(counts, fmt.Sprintf("%s=%d", c, p[f][c]))
		}
		s := strings.Join(counts, " ")
		if s == "" {
			s = "no cluster"
		}
		if len(p) > 1 {
			s = f + ": " + s
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// FromAnnotations reads the plan annotation; nil when absent or unreadable.
func FromAnnotations(annotations map[string]string) Plan {
	var p Plan
	if v, ok := annotations[federationv1beta1.ReplicaPlanAnnotation]; !ok || json.Unmarshal([]byte(v), &p) != nil {
		return nil
	}
	return p
}

// Encode is the annotation value of the plan.
func (p Plan) Encode() string {
	b, _ := json.Marshal(p)
	return string(b)
}

// Input is what a workload's plan is made from.
type Input struct {
	// Fed is the federated workload.
	Fed *unstructured.Unstructured
	// Clusters are the Ready clusters selected for it.
	Clusters []string
	// Members are their copies, where they have one.
	Members map[string]*unstructured.Unstructured
	// Away are the selected clusters that are not Ready: a workload that
	// runs whole in one of them stays there (see Whole).
	Away []string
	// Capacity bounds a cluster asked to run replicas of the first field;
	// nil when nothing is estimated.
	Capacity func(cluster string, replicas int64) (int64, bool)
}

// Result is a workload's plan and what could not be placed.
type Result struct {
	Plan Plan
	// Unplaced counts per field what fits no cluster.
	Unplaced map[string]int64
	// BadPreferences is set when the annotation could not be used (the
	// even spread was used instead).
	BadPreferences error
	// Whole is set when the workload is not divided but runs whole in one
	// cluster (ReplicaFields.Whole).
	Whole *Whole
}

// Divide divides the workload's fields over the clusters. Without
// rebalancing, what the previous plan gave each cluster (else what its copy
// asks for) is "current": a cluster that was unreachable had nothing in the
// previous plan, so its replicas do not come back unless rebalance is true.
func Divide(rf *federatedtypes.ReplicaFields, in Input) Result {
	res := Result{Plan: Plan{}, Unplaced: map[string]int64{}}
	prefs := replicapreferences.Default()
	if v, ok := in.Fed.GetAnnotations()[rf.Annotation]; ok {
		if p, err := replicapreferences.Parse(v); err != nil {
			res.BadPreferences = fmt.Errorf("annotation %s: %w", rf.Annotation, err)
		} else {
			prefs = p
		}
	}
	previous := FromAnnotations(in.Fed.GetAnnotations())
	if rf.Whole != nil && rf.Whole(in.Fed) && !dividedBefore(previous, in.Members) {
		return whole(rf, in, prefs, res, previous)
	}
	key := objectKey(in.Fed)
	for i, f := range rf.Fields {
		total, found, _ := unstructured.NestedInt64(in.Fed.Object, "spec", f)
		if !found {
			continue
		}
		if rf.Fixed[f] && previous[f] != nil {
			res.Plan[f] = previous[f]
			continue
		}
		current := previous[f]
		if current == nil {
			current = map[string]int64{}
			for c, m := range in.Members {
				current[c], _, _ = unstructured.NestedInt64(m.Object, "spec", f)
			}
		}
		capacity := map[string]int64{}
		if i == 0 && in.Capacity != nil {
			for _, c := range in.Clusters {
				var asked int64
				if m := in.Members[c]; m != nil {
					asked, _, _ = unstructured.NestedInt64(m.Object, "spec", f)
				}
				if n, limited := in.Capacity(c, asked); limited {
					capacity[c] = n
				}
			}
		}
		plan := plannerPreferences(prefs).Plan(planner.Input{Replicas: total, Clusters: in.Clusters, Current: current, Capacity: capacity, Key: key})
		res.Plan[f] = plan.Desired()
		if plan.Unplaced > 0 {
			res.Unplaced[f] = plan.Unplaced
		}
	}
	// A Job's cluster with completions to run needs at least one pod at a time.
	if par, comp := res.Plan["parallelism"], res.Plan["completions"]; par != nil && comp != nil {
		for _, c := range in.Clusters {
			if comp[c] > 0 && par[c] == 0 {
				par[c] = 1
			}
		}
	}
	return res
}

// plannerPreferences returns the annotation's preferences in the planner's
// terms (the planner knows nothing of annotations).
func plannerPreferences(p *replicapreferences.Preferences) planner.Preferences {
	out := planner.Preferences{Rebalance: p.Rebalance, Clusters: make(map[string]planner.ClusterPreference, len(p.Clusters))}
	for name, c := range p.Clusters {
		out.Clusters[name] = planner.ClusterPreference{MinReplicas: c.MinReplicas, MaxReplicas: c.MaxReplicas, Weight: c.Weight}
	}
	return out
}
