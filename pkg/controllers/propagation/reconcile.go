package propagation

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/hpatarget"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/controllers/propagation/release"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// Sync reconciles the federated object with key in every member cluster:
// refusal of the never-propagated namespaces → placement → desired copies
// → replica plan → per-cluster overrides → in-sync decision → dispatch of
// the member writes → status. A deleted object's copies are let go from its tombstones
// (tombstones.go).
func (c *Controller) Sync(ctx context.Context, key string) error {
	if c.r.MembersOwn(key) {
		return c.after(ctx, key)(c.r.LeaveToMembers(ctx, key))
	}
	gone, res, err := c.r.Tombstones(ctx, key)
	c.follow(key, res)
	if gone || err != nil {
		return err
	}
	if gone, res := c.r.Withdrawn(key); gone {
		c.follow(key, res)
		return nil
	}
	if namespace, never := c.r.NeverPropagated(key); never {
		return c.after(ctx, key)(c.r.Refuse(ctx, key, namespace))
	}
	fed, err := c.current(key)
	if fed == nil || err != nil {
		return err
	}
	if fed.GetDeletionTimestamp() != nil {
		return c.after(ctx, key)(c.r.Deleting(ctx, fed))
	}
	if c.r.IsLocal(fed) {
		c.r.KeepLocal(key, fed)
		return nil
	}
	// Ready clusters whose caches are still starting (the controller
	// manager just started: an upgrade, a failover) are not usable yet: a
	// plan now would leave them out, move their replicas away and write
	// every member twice. Look again shortly (Settled bounds the wait).
	if !c.members.Settled() {
		c.recheck(key, settleRecheck)
		return nil
	}
	if fed, err = c.ensureFinalizer(ctx, key, fed); fed == nil || err != nil {
		return err
	}
	placed, err := c.placedClusters(ctx, fed)
	if err != nil {
		c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonBadSelector, "%s %s: %v", c.typ.Kind, key, err)
		return nil
	}
	desired, hash, err := plan.Desired(c.typ, fed, c.members.Federation(), c.members.FederationUID())
	if err != nil {
		return fmt.Errorf("%s %s: %w", c.typ.Kind, key, err)
	}
	// Each cluster gets its own desired object when the workload is divided.
	fed, placed, desiredIn, planned, err := c.divide(ctx, fed, placed, desired, hash)
	if apierrors.IsNotFound(err) || errors.Is(err, hpatarget.ErrHPAGone) {
		// Deleted while our cache still had it: its tombstone brings the
		// key back (deletion.go, tombstones.go).
		return nil
	}
	if err != nil {
		return err
	}
	// Each cluster's own overrides, before the hash (overrides.go).
	desiredIn, overridden, err := plan.WithOverrides(c.typ, c.members.Federation(), fed, c.members.Clusters(), placed, desiredIn)
	if err != nil {
		c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonBadOverrides, "%s %s: %v", c.typ.Kind, key, err)
		return nil
	}
	copies, err := c.compare(fed, placed, desiredIn)
	if err != nil {
		return err
	}
	c.tellOverrides(fed, overridden)
	c.w.Dispatch(key, copies.writes)
	inFlight, failures := c.w.State(key, c.typ.Status != nil)
	failures = append(failures, overridden.Failures()...)
	if !inFlight && len(failures) == 0 {
		c.changes.propagated(key)
	}
	if c.typ.Status == nil {
		return nil
	}
	// From the member caches: copies being written come back with their
	// members' watch events.
	rolled := !inFlight && len(failures) == 0 && plan.Rolled(placed, copies.inSync, copies.hashes)
	return c.writeStatus(ctx, fed, append(copies.inSync, copies.changing...), rolled, inFlight, failures, planned)
}

// after does, when a release step returns, what it asks of the engine
// (follow), and returns its error.
func (c *Controller) after(ctx context.Context, key string) func(release.Result, error) error {
	return func(res release.Result, err error) error {
		c.follow(key, res)
		if err == nil && res.Refused != "" {
			return c.writeRefused(ctx, key, res.Refused)
		}
		return err
	}
}

// follow does what a release step asks: reconcile the object again later,
// or forget its change time when it is gone.
func (c *Controller) follow(key string, res release.Result) {
	if res.RecheckAfter > 0 {
		c.recheck(key, res.RecheckAfter)
	}
	if res.Gone {
		c.changes.forget(key)
	}
}

// current returns a copy of the federated object from the cache, or nil
// when it is gone (what was known of it is then forgotten).
func (c *Controller) current(key string) (*unstructured.Unstructured, error) {
	ns, name := fedobject.SplitKey(key)
	cached, err := c.objs.Get(ns, name)
	if apierrors.IsNotFound(err) {
		c.changes.forget(key)
		c.r.Forget(key)
		c.w.Forget(key)
		c.overridesTold.Delete(key)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return cached.DeepCopy(), nil
}

// ensureFinalizer adds our finalizer to a Namespace when the admission
// plugin did not, or to an object of a Finalized type, and returns the
// object as written; nil when our cache was behind and the object is looked
// at again shortly. Other objects get none: their deletions are recorded in
// tombstones (tombstones.go); of a DropsFinalizer type, one made before
// has it taken off.
func (c *Controller) ensureFinalizer(ctx context.Context, key string, fed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	held := slices.Contains(fed.GetFinalizers(), federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
	switch want := c.typ.Namespace || c.typ.Finalized; {
	case want && !held:
		fed.SetFinalizers(append(fed.GetFinalizers(), federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
	case !want && held && c.typ.DropsFinalizer:
		fed.SetFinalizers(withoutFinalizer(fed.GetFinalizers(), federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
	default:
		return fed, nil
	}
	updated, err := c.objs.Resource(fed.GetNamespace()).Update(ctx, fed, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		// Our cache is behind (often: the finalizer is already there):
		// look again shortly, without the error backoff.
		c.recheck(key, release.StaleRetry)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("updating the finalizers of %s %s: %w", c.typ.Kind, key, err)
	}
	return updated, nil
}

// withoutFinalizer returns finalizers without f.
func withoutFinalizer(finalizers []string, f string) []string {
	return slices.DeleteFunc(slices.Clone(finalizers), func(s string) bool { return s == f })
}

// placedClusters returns the Ready clusters that should hold a copy of fed.
func (c *Controller) placedClusters(ctx context.Context, fed *unstructured.Unstructured) (map[string]bool, error) {
	var hasNamespace func(string) bool
	if c.typ.Namespaced {
		hasNamespace = func(cluster string) bool {
			// Every member has default, never labelled by us.
			if fed.GetNamespace() == metav1.NamespaceDefault {
				return true
			}
			// Not in our label-filtered cache is not "not there": look.
			return c.namespaceIn(ctx, cluster, fed.GetNamespace())
		}
	}
	return plan.Placement(fed.GetAnnotations(), c.members.Clusters(), hasNamespace)
}

// memberCopies are the result of comparing the members with what they
// should hold.
type memberCopies struct {
	// inSync are the copies that hold what they should.
	inSync []federatedtypes.Member
	// changing are the copies of ours being brought to what they should
	// hold. A workload's counts include them: their pods are still there,
	// and leaving them out would have readiness drop during a scale-up or
	// a rollout (4 ready of 4, then 2 of 6). They never make it rolled.
	changing []federatedtypes.Member
	// writes are the tasks for the others.
	writes []writer.ClusterTask
	// hashes are what each cluster should hold.
	hashes map[string]string
}

// compare tells, from the member caches, which Ready clusters hold what
// they should of fed and which need a write.
func (c *Controller) compare(fed *unstructured.Unstructured, placed map[string]bool, desiredIn plan.DesiredIn) (memberCopies, error) {
	out := memberCopies{hashes: map[string]string{}}
	objKey := fedobject.Key(fed.GetNamespace(), fed.GetName())
	for _, cl := range c.members.Clusters() {
		if plan.Shared(c.typ, fed) {
			// Every member's own: placed, never written.
			continue
		}
		d, h, err := desiredIn(cl.Name)
		if errors.Is(err, plan.ErrOverrideFailed) {
			// Its copy is left as it is (overrides.go).
			out.inSync = append(out.inSync, c.leftAlone(cl.Name, fed)...)
			continue
		}
		if err == nil {
			d, h, err = c.w.ForCopy(cl.Name, fed, d, h)
		}
		if err != nil {
			return out, fmt.Errorf("%s %s in cluster %s: %w", c.typ.Kind, objKey, cl.Name, err)
		}
		out.hashes[cl.Name] = h
		cur, ok := c.members.Get(cl.Name, c.typ.Resource, fed.GetNamespace(), fed.GetName())
		if !ok {
			cur = nil
		}
		last, known := c.w.Last(cl.Name, objKey)
		// The copy's one judgment in this reconcile (plan.Judge).
		verdict := plan.Judge(plan.Observed{Placed: placed[cl.Name], Cur: cur, Last: last, Known: known, Desired: d, Hash: h})
		if verdict.Remember {
			c.w.Remember(cl.Name, objKey, cur)
		}
		task := writer.Task{Action: writer.Apply, Fed: fed, Desired: d, Hash: h, Basis: plan.Basis(cur, last, known), InSync: verdict.InSync}
		if !placed[cl.Name] {
			task.Action = writer.Unplace
		}
		// A copy in sync is still sent to the writer when what it names is
		// not held as ours there (the writer checks it live), or when a
		// task of it is queued (replaced: what it would write is out of
		// date).
		held := cur == nil || !placed[cl.Name] || c.w.ReferencesCached(cl.Name, d)
		if verdict.InSync && held && !c.w.Has(objKey, cl.Name) {
			if cur != nil && placed[cl.Name] {
				out.inSync = append(out.inSync, federatedtypes.Member{Cluster: cl.Name, Object: cur})
			}
			continue
		}
		if cur != nil && placed[cl.Name] && c.typ.ObservedGeneration && c.w.IsOurs(cur) {
			out.changing = append(out.changing, federatedtypes.Member{Cluster: cl.Name, Object: cur})
		}
		out.writes = append(out.writes, writer.ClusterTask{Cluster: cl.Name, Task: task})
	}
	return out, nil
}
