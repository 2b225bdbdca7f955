package release

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/hpatarget"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer"
	"github.com/federation-v1/federation/pkg/ownership"
)

// Finalizers the apiserver adds for a delete's propagation policy. The
// federation runs no garbage collector: the propagation controllers honour
// and remove them.
const (
	orphanFinalizer     = metav1.FinalizerOrphanDependents
	foregroundFinalizer = metav1.FinalizerDeleteDependents
)

// Orphaned reports whether the federated object was deleted with
// propagationPolicy Orphan (or orphanDependents): its member copies stay.
func Orphaned(fed *unstructured.Unstructured) bool {
	return slices.Contains(fed.GetFinalizers(), orphanFinalizer)
}

// Deleting handles a federated object being deleted: an HPA first gives
// its target its replica counts back, unless it is orphaned: its copies
// stay in the members and keep scaling the target there, so the target
// stays theirs in those clusters (else the federation would divide its
// replicas again and fight them).
func (r *Releaser) Deleting(ctx context.Context, fed *unstructured.Unstructured) (Result, error) {
	var res Result
	if r.typ.DividesHPA && !Orphaned(fed) {
		if err := hpatarget.Release(ctx, r.fed, r.typ.Resource, fed); err != nil {
			return res, err
		}
	}
	return res, r.delete(ctx, fed, &res)
}

// delete hands the deletion (or orphaning) of the member copies to the
// member queues, and once every copy is let go, lets the object go. The
// queues bring the object back when their writes are done.
func (r *Releaser) delete(ctx context.Context, fed *unstructured.Unstructured, res *Result) error {
	fins := fed.GetFinalizers()
	if !slices.Contains(fins, federationv1beta1.FinalizerDeleteFromUnderlyingClusters) && !slices.Contains(fins, orphanFinalizer) && !slices.Contains(fins, foregroundFinalizer) {
		return nil
	}
	ns, name := fed.GetNamespace(), fed.GetName()
	objKey := fedobject.Key(ns, name)
	if rv, ok := r.released.Load(objKey); ok && rv == fed.GetResourceVersion() {
		// Already let go; the cache has not seen it leave yet.
		return nil
	}
	if wait := r.waitForDependents(fed); wait > 0 {
		res.recheck(wait)
		return nil
	}
	if done, err := r.release(fed, true, res); !done || err != nil {
		return err
	}
	rv := fed.GetResourceVersion()
	fed.SetFinalizers(slices.DeleteFunc(fins, func(f string) bool {
		return f == federationv1beta1.FinalizerDeleteFromUnderlyingClusters || f == orphanFinalizer || f == foregroundFinalizer
	}))
	if _, err := r.objs.Resource(ns).Update(ctx, fed, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing finalizers of %s: %w", r.objs.What(objKey), err)
	}
	r.released.Store(objKey, rv)
	return nil
}

// release hands the deletion (or orphaning) of fed's member copies to the
// member queues, and reports whether every copy is let go; then, unless
// waitUnusable is false, also in the selected clusters that are away, once
// DeletionWait has passed. The queues bring the object back when their
// writes are done.
func (r *Releaser) release(fed *unstructured.Unstructured, waitUnusable bool, res *Result) (bool, error) {
	objKey := fedobject.Key(fed.GetNamespace(), fed.GetName())
	r.w.DropWrites(objKey)
	usable, releases := r.copiesToRelease(fed)
	r.w.Dispatch(objKey, releases)
	if inFlight, failures := r.w.State(objKey, false); inFlight || len(failures) > 0 {
		// Failed writes are retried with their own backoff.
		return false, nil
	}
	if !Orphaned(fed) && waitUnusable {
		if wait, err := r.waitForUnusable(fed, usable); err != nil || wait > 0 {
			if wait > 0 {
				res.recheck(wait)
			}
			return false, err
		}
	}
	return true, nil
}

// copiesToRelease returns the usable clusters whose copies are known, and
// a Delete (or Orphan) task for each of their copies not yet let go.
func (r *Releaser) copiesToRelease(fed *unstructured.Unstructured) (map[string]bool, []writer.ClusterTask) {
	ns, name := fed.GetNamespace(), fed.GetName()
	objKey := fedobject.Key(ns, name)
	action := writer.Delete
	if Orphaned(fed) {
		action = writer.Orphan
	}
	usable := map[string]bool{}
	var tasks []writer.ClusterTask
	for _, cl := range r.members.Clusters() {
		if plan.Shared(r.typ, fed) {
			usable[cl.Name] = true
			continue
		}
		if !r.members.Synced(cl.Name, r.typ.Resource) {
			if r.members.Forbidden(cl.Name, r.typ.Resource) && !r.w.Known(cl.Name, objKey) && !r.w.Has(objKey, cl.Name) {
				// We may not even read the resource there (a custom
				// resource group the member was not joined for) and never
				// wrote a copy: nothing to let go, nothing to wait for.
				usable[cl.Name] = true
			}
			// Else its copies are not known yet: the cache's events bring
			// the object back, and waitForUnusable bounds the wait.
			continue
		}
		usable[cl.Name] = true
		if r.w.Released(objKey, cl.Name) {
			continue
		}
		cur, inCache := r.members.Get(cl.Name, r.typ.Resource, ns, name)
		if inCache {
			if !ownership.IsUs(cur, r.members.Federation(), r.members.FederationUID()) {
				// Another federation's of our name: never touched.
				inCache = false
			}
		}
		written := r.w.Known(cl.Name, objKey)
		// Written by us but not in the cache yet, or being written: act on
		// it anyway.
		if inCache || written || r.w.Has(objKey, cl.Name) {
			tasks = append(tasks, writer.ClusterTask{Cluster: cl.Name, Task: writer.Task{Action: action, Fed: fed}})
		}
	}
	return usable, tasks
}

// waitForUnusable returns how much longer the deletion should wait for
// selected clusters that are not usable now; once DeletionWait has passed
// since the deletion it gives up on them with an event naming each.
func (r *Releaser) waitForUnusable(fed *unstructured.Unstructured, usable map[string]bool) (time.Duration, error) {
	all, err := r.members.AllClusters()
	if err != nil {
		return 0, err
	}
	var pending []string
	for _, cl := range all {
		if !usable[cl.Name] && plan.Selected(fed.GetAnnotations(), cl) {
			pending = append(pending, cl.Name)
		}
	}
	if len(pending) == 0 {
		return 0, nil
	}
	left := time.Until(fed.GetDeletionTimestamp().Add(r.opts.DeletionWait))
	if left > 0 {
		return min(left, 5*time.Second), nil
	}
	slices.Sort(pending)
	what := r.objs.What(fedobject.Key(fed.GetNamespace(), fed.GetName()))
	for _, cl := range pending {
		r.recorder.Eventf(fed, corev1.EventTypeWarning, writer.ReasonDeleteFailed,
			"Gave up deleting %s in cluster %s after %s: the cluster is not Ready; delete it there by hand", what, cl, r.opts.DeletionWait)
	}
	return 0, nil
}
