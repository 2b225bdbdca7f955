package replicaplan

import (
	"encoding/json"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/planner"
)

// HPAClusters are the clusters whose HPA owns the replica count.
func HPAClusters(annotations map[string]string) map[string]bool {
	var list struct{ Names []string }
	if v, ok := annotations[federationv1beta1.HPATargetClustersAnnotation]; !ok || json.Unmarshal([]byte(v), &list) != nil {
		return nil
	}
	out := map[string]bool{}
	for _, n := range list.Names {
		out[n] = true
	}
	return out
}

// Change is a federated workload's spec.replicas moving to what
// the HPA clusters run.
type Change struct {
	From, To int64
	// HPA is what each HPA cluster runs.
	HPA map[string]int64
}

// String shows what each HPA cluster runs: "cluster1=2 cluster2=3".
func (r Change) String() string {
	return Plan{"replicas": r.HPA}.String()
}

// FollowHPA returns the workload with spec.replicas set to what its
// clusters run while their own HPAs own the count: in one cluster the HPA
// sets its target's replicas, and so `kubectl get` and `kubectl rollout
// status` at the federation agree with the members (the sum of their
// updated replicas is compared with spec.replicas). A cluster without an
// HPA counts with its planned share. Nothing changes until every HPA
// cluster's copy is known, nor when the count is already right (nil change).
func FollowHPA(in Input) (*unstructured.Unstructured, *Change) {
	hpa := HPAClusters(in.Fed.GetAnnotations())
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
	planned := FromAnnotations(in.Fed.GetAnnotations())["replicas"]
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
	return out, &Change{From: current, To: total, HPA: runs}
}

// DivideHPA divides a federated HPA's minReplicas and maxReplicas over
// the clusters that run its target (running: the target's plan gives them
// replicas; all of placed when the target has no plan). As in v1, maxReplicas
// is spread evenly and a cluster whose share is 0 gets no HPA; minReplicas
// is spread evenly over the rest, each at least 1 and at most its maximum.
func DivideHPA(hpa, target *unstructured.Unstructured, placed map[string]bool) Plan {
	running := FromAnnotations(target.GetAnnotations())["replicas"]
	var clusters []string
	for _, c := range slices.Sorted(maps.Keys(placed)) {
		if running == nil || running[c] > 0 {
			clusters = append(clusters, c)
		}
	}
	maxTotal, _, _ := unstructured.NestedInt64(hpa.Object, "spec", "maxReplicas")
	minTotal, found, _ := unstructured.NestedInt64(hpa.Object, "spec", "minReplicas")
	if !found {
		minTotal = 1
	}
	even := planner.Preferences{Rebalance: true, Clusters: map[string]planner.ClusterPreference{planner.Wildcard: {Weight: 1}}}
	key := objectKey(hpa)
	maxes := even.Plan(planner.Input{Replicas: maxTotal, Clusters: clusters, Key: key}).Desired()
	var with []string
	for _, c := range clusters {
		if maxes[c] > 0 {
			with = append(with, c)
		} else {
			delete(maxes, c)
		}
	}
	mins := even.Plan(planner.Input{Replicas: minTotal, Clusters: with, Key: key}).Desired()
	for _, c := range with {
		mins[c] = min(max(mins[c], 1), maxes[c])
	}
	return Plan{"minReplicas": mins, "maxReplicas": maxes}
}
