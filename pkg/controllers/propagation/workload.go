package propagation

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/capacity"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/planner/replicaplan"
)

// Event reasons and the condition of divided workloads.
const (
	ReasonReplicasPlanned  = "ReplicasPlanned"
	ReasonReplicasUnplaced = "ReplicasUnplaced"
	ReasonBadPreferences   = "InvalidReplicaPreferences"
	ReasonScaledByHPA      = "ScaledByHPA"
	// ReasonNotDivided: a workload that must not be divided (an Indexed
	// Job) was given whole to one cluster.
	ReasonNotDivided = "IndexedJobNotDivided"
	// ReasonDivisionIgnored: its preferences asked to divide it.
	ReasonDivisionIgnored   = "IndexedJobPreferencesIgnored"
	ReplicasPlacedCondition = "ReplicasPlaced"
)

// Capacity estimates what a member can run of a workload (see package
// capacity); nil in a controller means no estimates.
type Capacity interface {
	Capacity(cluster string, w capacity.Workload, replicas int64) (int64, bool)
	Subscribe(kind string, enqueue func(key string))
}

// SetCapacity makes the controller bound clusters by the estimates, and
// re-plan a workload when its estimate may have changed.
func (c *Controller) SetCapacity(e Capacity) {
	c.capacity = e
	e.Subscribe(c.typ.Kind, func(key string) { c.queue.Add(key) })
}

// planReplicas makes the plan of a divided workload over the placed
// clusters, records it in the plan annotation with an event when it
// changed, and returns the (possibly updated) object, the plan, the
// ReplicasPlaced condition and, for a workload that is not divided, the one
// cluster that runs it.
func (c *Controller) planReplicas(ctx context.Context, fed *unstructured.Unstructured, placed map[string]bool) (*unstructured.Unstructured, replicaplan.Plan, *condition, *replicaplan.Whole, error) {
	ns, name := fed.GetNamespace(), fed.GetName()
	what := fmt.Sprintf("%s %s", c.typ.Kind, fedobject.Key(ns, name))
	in := replicaplan.Input{Fed: fed, Clusters: slices.Sorted(maps.Keys(placed)), Members: map[string]*unstructured.Unstructured{}}
	if c.typ.Replicas.Whole != nil && c.typ.Replicas.Whole(fed) {
		in.Away = c.away(fed)
	}
	for _, cl := range in.Clusters {
		if m, ok := c.members.Get(cl, c.typ.Resource, ns, name); ok {
			in.Members[cl] = m
		}
	}
	if c.capacity != nil {
		w := capacity.Workload{Kind: c.typ.Kind, Namespace: ns, Name: name}
		in.Capacity = func(cluster string, replicas int64) (int64, bool) { return c.capacity.Capacity(cluster, w, replicas) }
	}
	var followed *replicaplan.Change
	in.Fed, followed = replicaplan.FollowHPA(in)
	fed = in.Fed
	res := replicaplan.Divide(c.typ.Replicas, in)
	if res.BadPreferences != nil {
		c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonBadPreferences, "%s: %v; spreading evenly instead", what, res.BadPreferences)
	}
	cond := &condition{Type: ReplicasPlacedCondition, Status: "True", Reason: "Placed", Message: "every replica has a cluster: " + res.Plan.String()}
	if len(res.Unplaced) > 0 {
		var total int64
		for _, n := range res.Unplaced {
			total += n
		}
		cond.Status, cond.Reason = "False", ReasonReplicasUnplaced
		why := "every weight is 0, or every cluster is at its maxReplicas"
		if len(placed) == 0 {
			why = "no selected cluster is Ready"
		}
		cond.Message = fmt.Sprintf("%d replicas fit no cluster: %s (plan: %s)", total, why, res.Plan.String())
	}

	unplaced := cond
	if len(res.Unplaced) == 0 {
		unplaced = nil
	}
	newPlan := fed.GetAnnotations()[federationv1beta1.ReplicaPlanAnnotation] != res.Plan.Encode()
	updated, err := c.recordPlan(ctx, fed, res.Plan, unplaced, followed != nil)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if followed != nil {
		c.recorder.Eventf(updated, corev1.EventTypeNormal, ReasonScaledByHPA,
			"Replicas %d (was %d): what the clusters' HPAs run (%s)", followed.To, followed.From, followed)
	}
	if w := res.Whole; w != nil && w.Chosen && w.Cluster != "" && newPlan {
		if w.Ignored != "" {
			c.recorder.Eventf(updated, corev1.EventTypeWarning, ReasonDivisionIgnored,
				"%s: its preferences ask to divide it (%s), which would run the same indexes in several clusters: ignored", what, w.Ignored)
		}
		c.recorder.Eventf(updated, corev1.EventTypeNormal, ReasonNotDivided,
			"%s is an Indexed Job: not divided, it runs whole in cluster %s (%s); no other cluster gets a copy", what, w.Cluster, w.Why)
	}
	return updated, res.Plan, cond, res.Whole, nil
}

// away are the clusters selected for fed that are not Ready now (a whole
// workload chosen to run in one of them stays there).
func (c *Controller) away(fed *unstructured.Unstructured) []string {
	all, err := c.members.AllClusters()
	if err != nil {
		return nil
	}
	var out []string
	for _, cl := range all {
		if !c.members.Usable(cl.Name) && plan.Selected(fed.GetAnnotations(), cl) {
			out = append(out, cl.Name)
		}
	}
	return out
}

// recordPlan writes a changed plan into the plan annotation, with an event
// showing the old and new distribution (and a warning for what is
// unplaced), and returns the updated object. specChanged writes fed even
// when the plan is the same.
func (c *Controller) recordPlan(ctx context.Context, fed *unstructured.Unstructured, shares replicaplan.Plan, unplaced *condition, specChanged bool) (*unstructured.Unstructured, error) {
	previous := replicaplan.FromAnnotations(fed.GetAnnotations())
	value := shares.Encode()
	if fed.GetAnnotations()[federationv1beta1.ReplicaPlanAnnotation] == value {
		if !specChanged {
			return fed, nil
		}
		updated, err := c.objs.Resource(fed.GetNamespace()).Update(ctx, fed, metav1.UpdateOptions{})
		if err != nil {
			return nil, fmt.Errorf("writing the replicas of %s %s: %w", c.typ.Kind, fedobject.Key(fed.GetNamespace(), fed.GetName()), err)
		}
		return updated, nil
	}
	updated := fed.DeepCopy()
	annotations := updated.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[federationv1beta1.ReplicaPlanAnnotation] = value
	updated.SetAnnotations(annotations)
	updated, err := c.objs.Resource(fed.GetNamespace()).Update(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("writing the replica plan of %s %s: %w", c.typ.Kind, fedobject.Key(fed.GetNamespace(), fed.GetName()), err)
	}
	was := "none"
	if previous != nil {
		was = previous.String()
	}
	c.recorder.Eventf(updated, corev1.EventTypeNormal, ReasonReplicasPlanned, "Replica plan: %s (was: %s)", shares.String(), was)
	if unplaced != nil {
		c.recorder.Eventf(updated, corev1.EventTypeWarning, ReasonReplicasUnplaced, "%s", unplaced.Message)
	}
	return updated, nil
}

// divide plans a divided workload or HPA and returns the (possibly updated)
// object, the clusters that get a copy, what each is sent, and the
// ReplicasPlaced condition; types copied whole send desired everywhere.
func (c *Controller) divide(ctx context.Context, fed *unstructured.Unstructured, placed map[string]bool,
	desired *unstructured.Unstructured, hash string) (*unstructured.Unstructured, map[string]bool, plan.DesiredIn, *condition, error) {
	same := func(string) (*unstructured.Unstructured, string, error) { return desired, hash, nil }
	switch {
	case c.typ.Replicas != nil:
		fed, shares, planned, whole, err := c.planReplicas(ctx, fed, placed)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if whole != nil {
			// Only its cluster holds a copy; the others' are let go.
			running := map[string]bool{}
			if placed[whole.Cluster] {
				running[whole.Cluster] = true
			}
			placed = running
		}
		hpa := replicaplan.HPAClusters(fed.GetAnnotations())
		return fed, placed, func(cluster string) (*unstructured.Unstructured, string, error) {
			var own *int64
			if m, ok := c.members.Get(cluster, c.typ.Resource, fed.GetNamespace(), fed.GetName()); ok {
				if n, found, _ := unstructured.NestedInt64(m.Object, "spec", "replicas"); found && hpa[cluster] {
					own = &n
				}
			}
			return plan.DesiredFor(desired, shares, cluster, own)
		}, planned, nil
	case c.typ.DividesHPA:
		fed, placed, shares, err := c.planHPA(ctx, fed, placed)
		if err != nil || shares == nil {
			return fed, placed, same, nil, err
		}
		return fed, placed, func(cluster string) (*unstructured.Unstructured, string, error) {
			return plan.DesiredFor(desired, shares, cluster, nil)
		}, nil, nil
	}
	return fed, placed, same, nil, nil
}
