package deploymenthistory

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	deploymentutil "k8s.io/kubernetes/pkg/controller/deployment/util"
)

// statuses returns the status each history ReplicaSet should have, by name,
// split from the Deployment's status (which the propagation controller sums
// over the members). nil while the members have not all observed the
// Deployment's current generation: their counts then describe an earlier
// template, and the ReplicaSets keep the status they have.
//
// The current ReplicaSet gets the updated pods (status.updatedReplicas).
// Old pods (replicas - updatedReplicas) are given to the previous revision,
// the others get 0: the members' old pods are mostly of the template just
// replaced. Which pods are ready is not summed per template by the members'
// status, so during a rollout the current ReplicaSet's ready and available
// counts are a lower bound, taking every old pod as ready (never more than
// its pods really are, so Helm's --wait does not return early); once the
// rollout is complete (no old pods) they are exact.
func statuses(d *appsv1.Deployment, r revisions) map[string]appsv1.ReplicaSetStatus {
	if d.Status.ObservedGeneration < d.Generation || r.current == nil {
		return nil
	}
	s := d.Status
	updated := max(s.UpdatedReplicas, 0)
	oldPods := max(s.Replicas-updated, 0)
	newReady := clamp(s.ReadyReplicas-oldPods, 0, updated)
	newAvailable := clamp(s.AvailableReplicas-oldPods, 0, newReady)
	out := map[string]appsv1.ReplicaSetStatus{
		r.current.Name: {
			Replicas: updated, FullyLabeledReplicas: updated, ReadyReplicas: newReady, AvailableReplicas: newAvailable,
			ObservedGeneration: r.current.Generation,
		},
	}
	var previous *appsv1.ReplicaSet
	if len(r.old) > 0 {
		byRevision := append([]*appsv1.ReplicaSet(nil), r.old...)
		// Sorted by revision, the last is the previous one.
		sortByRevision(byRevision)
		previous = byRevision[len(byRevision)-1]
	}
	for _, rs := range r.old {
		st := appsv1.ReplicaSetStatus{ObservedGeneration: rs.Generation}
		if rs == previous {
			st.Replicas = oldPods
			st.FullyLabeledReplicas = oldPods
			st.ReadyReplicas = clamp(s.ReadyReplicas-newReady, 0, oldPods)
			st.AvailableReplicas = clamp(s.AvailableReplicas-newAvailable, 0, st.ReadyReplicas)
		}
		out[rs.Name] = st
	}
	return out
}

// statusChanged reports whether rs's status differs from want in what
// statuses sets.
func statusChanged(rs *appsv1.ReplicaSet, want appsv1.ReplicaSetStatus) bool {
	s := rs.Status
	return s.Replicas != want.Replicas || s.FullyLabeledReplicas != want.FullyLabeledReplicas || s.ReadyReplicas != want.ReadyReplicas ||
		s.AvailableReplicas != want.AvailableReplicas || s.ObservedGeneration != want.ObservedGeneration
}

func clamp(v, lo, hi int32) int32 {
	return min(max(v, lo), hi)
}

// sortByRevision sorts ReplicaSets by revision, as Kubernetes does
// (creation time for equal revisions).
func sortByRevision(rss []*appsv1.ReplicaSet) {
	sort.Sort(deploymentutil.ReplicaSetsByRevision(rss))
}
