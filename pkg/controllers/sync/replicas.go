package sync

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/planner"
	"github.com/federation-v1/federation/pkg/replicapreferences"
)

// Annotations of divided workloads.
const (
	// PlanAnnotation on a federated workload holds the current plan: per
	// divided field, the count each Ready cluster runs, such as
	// {"replicas":{"cluster1":3,"cluster2":3}}. Written by the controller.
	PlanAnnotation = "federation.kubernetes.io/replica-plan"
	// HPATargetAnnotation on a federated Deployment or ReplicaSet lists the
	// clusters, {"Names":["c1"]}, whose own HPA owns the replica count: the
	// federation leaves spec.replicas there to the member.
	HPATargetAnnotation = "federation.kubernetes.io/hpa-target-cluster-list"
)

// ReplicaFields say how a workload type is divided over clusters.
type ReplicaFields struct {
	// Annotation holds the replica allocation preferences.
	Annotation string
	// Fields of spec that are divided; the first is also bounded by the
	// clusters' capacity (pods that stay unschedulable).
	Fields []string
	// Fixed fields are divided once and then kept, because members cannot
	// change them (a Job's completions).
	Fixed map[string]bool
	// FixedTemplate says the pod template cannot change once the object
	// exists (a Job's): a copy that a member holds without the federation's
	// pod label (adopted, or older than the label) is sent without it.
	FixedTemplate bool
}

// ReplicaPlan is, per divided field, the count per cluster.
type ReplicaPlan map[string]map[string]int64

// String shows one field's plan as "cluster1=3 cluster2=3"; the whole plan
// when there are several fields.
func (p ReplicaPlan) String() string {
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

// parsePlan reads the plan annotation; nil when absent or unreadable.
func parsePlan(annotations map[string]string) ReplicaPlan {
	var p ReplicaPlan
	if v, ok := annotations[PlanAnnotation]; !ok || json.Unmarshal([]byte(v), &p) != nil {
		return nil
	}
	return p
}

// encode is the annotation value of the plan.
func (p ReplicaPlan) encode() string {
	b, _ := json.Marshal(p)
	return string(b)
}

// PlanInput is what a workload's plan is made from.
type PlanInput struct {
	// Fed is the federated workload.
	Fed *unstructured.Unstructured
	// Clusters are the Ready clusters selected for it.
	Clusters []string
	// Members are their copies, where they have one.
	Members map[string]*unstructured.Unstructured
	// Capacity bounds a cluster asked to run replicas of the first field;
	// nil when nothing is estimated.
	Capacity func(cluster string, replicas int64) (int64, bool)
}

// PlanResult is a workload's plan and what could not be placed.
type PlanResult struct {
	Plan ReplicaPlan
	// Unplaced counts per field what fits no cluster.
	Unplaced map[string]int64
	// BadPreferences is set when the annotation could not be used (the
	// even spread was used instead).
	BadPreferences error
}

// PlanReplicas divides the workload's fields over the clusters. Without
// rebalancing, what the previous plan gave each cluster (else what its copy
// asks for) is "current": a cluster that was unreachable had nothing in the
// previous plan, so its replicas do not come back unless rebalance is true.
func PlanReplicas(rf *ReplicaFields, in PlanInput) PlanResult {
	res := PlanResult{Plan: ReplicaPlan{}, Unplaced: map[string]int64{}}
	prefs := replicapreferences.Default()
	if v, ok := in.Fed.GetAnnotations()[rf.Annotation]; ok {
		if p, err := replicapreferences.Parse(v); err != nil {
			res.BadPreferences = fmt.Errorf("annotation %s: %w", rf.Annotation, err)
		} else {
			prefs = p
		}
	}
	previous := parsePlan(in.Fed.GetAnnotations())
	key := key(in.Fed.GetNamespace(), in.Fed.GetName())
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
		plan := prefs.Planner().Plan(planner.Input{Replicas: total, Clusters: in.Clusters, Current: current, Capacity: capacity, Key: key})
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

// hpaClusters are the clusters whose HPA owns the replica count.
func hpaClusters(annotations map[string]string) map[string]bool {
	var list struct{ Names []string }
	if v, ok := annotations[HPATargetAnnotation]; !ok || json.Unmarshal([]byte(v), &list) != nil {
		return nil
	}
	out := map[string]bool{}
	for _, n := range list.Names {
		out[n] = true
	}
	return out
}

// ReplicaChange is a federated workload's spec.replicas moving to what
// the HPA clusters run.
type ReplicaChange struct {
	From, To int64
	// HPA is what each HPA cluster runs.
	HPA map[string]int64
}

// String shows what each HPA cluster runs: "cluster1=2 cluster2=3".
func (r ReplicaChange) String() string {
	return ReplicaPlan{"replicas": r.HPA}.String()
}

// FollowHPA returns the workload with spec.replicas set to what its
// clusters run while their own HPAs own the count: in one cluster the HPA
// sets its target's replicas, and so `kubectl get` and `kubectl rollout
// status` at the federation agree with the members (the sum of their
// updated replicas is compared with spec.replicas). A cluster without an
// HPA counts with its planned share. Nothing changes until every HPA
// cluster's copy is known, nor when the count is already right (nil change).
func FollowHPA(in PlanInput) (*unstructured.Unstructured, *ReplicaChange) {
	hpa := hpaClusters(in.Fed.GetAnnotations())
	if len(hpa) == 0 {
		return in.Fed, nil
	}
	var total int64
	runs := map[string]int64{}
	for cluster := range hpa {
		m := in.Members[cluster]
		if m == nil {
			return in.Fed, nil
		}
		n, found, _ := unstructured.NestedInt64(m.Object, "spec", "replicas")
		if !found {
			return in.Fed, nil
		}
		runs[cluster] = n
		total += n
	}
	planned := parsePlan(in.Fed.GetAnnotations())["replicas"]
	for _, cluster := range in.Clusters {
		if !hpa[cluster] {
			total += planned[cluster]
		}
	}
	current, _, _ := unstructured.NestedInt64(in.Fed.Object, "spec", "replicas")
	if current == total {
		return in.Fed, nil
	}
	out := in.Fed.DeepCopy()
	if err := unstructured.SetNestedField(out.Object, total, "spec", "replicas"); err != nil {
		return in.Fed, nil
	}
	return out, &ReplicaChange{From: current, To: total, HPA: runs}
}

// DesiredFor returns what one cluster is sent of a divided workload: the
// common desired object with the cluster's counts, and its hash. Where the
// member's own HPA owns spec.replicas, memberReplicas is the member's
// current count and is sent back unchanged: the federation follows the
// member. (Leaving the field out instead would make server-side apply
// reset it to the default, since the federation owned it until then.)
// Without podLabel the pod template goes without the federation's label
// (see ReplicaFields.FixedTemplate).
func DesiredFor(desired *unstructured.Unstructured, plan ReplicaPlan, cluster string, memberReplicas *int64, podLabel bool) (*unstructured.Unstructured, string, error) {
	out := desired.DeepCopy()
	if !podLabel {
		removePodLabel(out)
	}
	annotations := out.GetAnnotations()
	delete(annotations, HashAnnotation)
	if len(annotations) == 0 {
		annotations = nil
	}
	out.SetAnnotations(annotations)
	for f, counts := range plan {
		n := counts[cluster]
		if f == "replicas" && memberReplicas != nil {
			n = *memberReplicas
		}
		if err := unstructured.SetNestedField(out.Object, n, "spec", f); err != nil {
			return nil, "", err
		}
	}
	hash, err := hashOf(out)
	if err != nil {
		return nil, "", err
	}
	annotations = out.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[HashAnnotation] = hash
	out.SetAnnotations(annotations)
	return out, hash, nil
}

// withoutPodLabel is an object as sent to a member, without the
// federation's pod label, and its hash.
func withoutPodLabel(sent *unstructured.Unstructured) (*unstructured.Unstructured, string, error) {
	return DesiredFor(sent, nil, "", nil, false)
}

// podLabelled reports whether an object's pod template carries the
// federation's label.
func podLabelled(obj *unstructured.Unstructured) bool {
	_, found, _ := unstructured.NestedString(obj.Object, "spec", "template", "metadata", "labels", membercluster.FederationLabel)
	return found
}

// removePodLabel takes the federation's label off the pod template, and
// the label map and metadata it leaves empty.
func removePodLabel(obj *unstructured.Unstructured) {
	path := []string{"spec", "template", "metadata", "labels"}
	unstructured.RemoveNestedField(obj.Object, append(path, membercluster.FederationLabel)...)
	for len(path) > 2 {
		if m, found, _ := unstructured.NestedMap(obj.Object, path...); found && len(m) == 0 {
			unstructured.RemoveNestedField(obj.Object, path...)
		}
		path = path[:len(path)-1]
	}
}
