package writer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/csaupgrade"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/syncmetrics"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer/guard"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer/internal/queues"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/memberrbac"
	"github.com/federation-v1/federation/pkg/ownership"
)

// writeMember makes one member hold what the task says, and returns what
// it wrote (nil when nothing).
func (w *Writer) writeMember(ctx context.Context, cluster string, t queues.Task) (*queues.Event, error) {
	// Releases touch only copies found ours (by label and UID): they are
	// let go wherever they are.
	if t.Action == queues.Apply {
		if err := w.guard.MayWriteIn(ctx, cluster, t.Fed); err != nil {
			return nil, err
		}
	}
	switch t.Action {
	case queues.Delete:
		return w.deleteCopy(ctx, cluster, t.Fed, "")
	case queues.Orphan:
		return nil, w.orphanCopy(ctx, cluster, t.Fed)
	case queues.Unplace:
		if w.stale(cluster, t) {
			return nil, nil
		}
		// Our caches said so; live reads must agree (unplace.go).
		if confirmed, err := w.confirmUnplace(ctx, cluster, t.Fed); !confirmed || err != nil {
			return nil, err
		}
		return w.deleteCopy(ctx, cluster, t.Fed, ": no longer selected")
	}
	// Before the in-sync check: a copy in sync is sent here again when
	// what it names left our cache, or turned out another's (compare,
	// ReferencesCached, CheckUnheld).
	if err := w.guard.ReferencesOurs(ctx, cluster, t.Fed, t.Desired, t.Hash); err != nil {
		return w.releaseIfNotOurs(ctx, cluster, t, err)
	}
	if w.stale(cluster, t) || t.InSync {
		return nil, nil
	}
	ev, err := w.applyWithAccess(ctx, cluster, t.Fed, t.Desired, t.Hash)
	// A custom resource group the member was not joined for: told once,
	// and spaced out as every refused write.
	err = w.guard.GroupNotGranted(cluster, t.Fed, err)
	return ev, w.guard.SpaceOutRefused(cluster, fedobject.Key(t.Fed.GetNamespace(), t.Fed.GetName()), t.Hash, err)
}

// applyCopy makes a member hold desired: a new copy is created (which
// fails when the member has an object of that name), an existing copy of
// ours is applied server-side. An object that is not ours is left alone
// (a conflict) unless it is the member's own and adoption is asked for.
func (w *Writer) applyCopy(ctx context.Context, cluster string, fed, desired *unstructured.Unstructured, hash string) (*queues.Event, error) {
	if plan.Shared(w.typ, fed) {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, w.opts.MemberTimeout)
	defer cancel()
	ns, name := fed.GetNamespace(), fed.GetName()
	objKey := fedobject.Key(ns, name)
	cur, exists := w.members.Get(cluster, w.typ.Resource, ns, name)
	last, appliedBefore := w.applied.get(cluster, objKey)
	if exists {
		// Our label's name, another federation's UID.
		if o, other := w.ownerOf(cur); o != ownership.Us {
			return nil, w.guard.Conflict(cluster, fed, cur, other)
		}
	}
	// Before any member call: a copy whose repairs are spent costs none.
	if err := w.guard.RepairAllowed(cluster, fed, hash, last.hash, appliedBefore); err != nil {
		return nil, err
	}
	ev := &queues.Event{Reason: ReasonUpdate, Verb: "Updated"}
	// Changed there while what we send stayed the same (a member's HPA
	// changing replicas the federation follows is an update, not drift).
	if exists && appliedBefore && !plan.SameVersion(last.version, cur) && cur.GetAnnotations()[federationv1beta1.AppliedHashAnnotation] == hash {
		ev = &queues.Event{Reason: ReasonUpdate, Verb: "Restored", Suffix: ": it was changed there"}
	}
	created := &queues.Event{Reason: ReasonCreate, Verb: "Created"}
	// Never written and not in a synced cache: absent, or not ours, which
	// the create's answer tells apart. Written before but not in our
	// cache: not there yet, deleted there, or our label taken off.
	if !exists && !appliedBefore && !w.guard.ConflictKnown(cluster, objKey) && w.members.Synced(cluster, w.typ.Resource) {
		return w.createCopy(ctx, cluster, fed, desired, created)
	}
	if !exists {
		live, err := w.readLive(ctx, cluster, fed)
		if apierrors.IsNotFound(err) {
			if appliedBefore {
				created = &queues.Event{Reason: ReasonCreate, Verb: "Recreated", Suffix: ": it was deleted there"}
			}
			return w.createCopy(ctx, cluster, fed, desired, created)
		}
		if err != nil {
			return nil, err
		}
		if o, other := w.ownerOf(live); o == ownership.Other {
			return nil, w.guard.Conflict(cluster, fed, live, other)
		} else if o == ownership.Member {
			return w.adopt(ctx, cluster, fed, desired, live)
		}
		if ownership.IsAdopted(live) && !ownership.IsAdopted(desired) {
			var err error
			if desired, hash, err = plan.WithAdopted(w.typ, desired); err != nil {
				return nil, err
			}
		}
		// The cache could not tell (plan.Verdict.NotCached): this read is
		// the copy's judgment.
		if plan.Judge(plan.Observed{Placed: true, Cur: live, Last: last.lastWrite(), Known: appliedBefore, Desired: desired, Hash: hash}).InSync {
			// Our own write, not yet in the cache.
			return nil, nil
		}
	}
	return w.update(ctx, cluster, fed, desired, ev)
}

// update applies desired over our copy, forced: the copy is ours, and
// fields the member changed are taken back.
func (w *Writer) update(ctx context.Context, cluster string, fed, desired *unstructured.Unstructured, ev *queues.Event) (*queues.Event, error) {
	objKey := fedobject.Key(fed.GetNamespace(), fed.GetName())
	start := time.Now()
	out, err := w.apply(ctx, cluster, desired)
	var passed []string
	if err == nil && handOverNeeded(out) {
		// Fields our create set belong to its Update entry alone, and our
		// applies would never remove them: hand them over (once), and
		// apply again to remove them.
		passed = append(passed, out.GetResourceVersion())
		var upgraded string
		if upgraded, err = w.upgrade(ctx, cluster, desired, out); err == nil {
			passed = append(passed, upgraded)
			out, err = w.apply(ctx, cluster, desired)
		}
	}
	if err != nil {
		failed := ReasonUpdateFailed
		if ev.Reason == ReasonCreate {
			failed = ReasonCreateFailed
		}
		w.warnFailed(fed, failed, err, "Applying %s in cluster %s failed: %v", w.objs.What(objKey), cluster, err)
		return nil, fmt.Errorf("applying %s in cluster %s: %w", w.objs.What(objKey), cluster, err)
	}
	klog.FromContext(ctx).V(2).Info("Applied to member", "cluster", cluster, "object", objKey, "took", time.Since(start))
	w.wrote(cluster, objKey, out, passed...)
	return ev, nil
}

// createCopy creates a new copy: one call. When the member already has an
// object of the name, it is read to tell whose it is.
func (w *Writer) createCopy(ctx context.Context, cluster string, fed, desired *unstructured.Unstructured, ev *queues.Event) (*queues.Event, error) {
	objKey := fedobject.Key(fed.GetNamespace(), fed.GetName())
	out, err := w.createIn(ctx, cluster, desired)
	w.countWrite(cluster, "create", err)
	if apierrors.IsAlreadyExists(err) {
		live, err := w.readLive(ctx, cluster, fed)
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("creating %s in cluster %s: it was there, then gone: trying again", w.objs.What(objKey), cluster)
		}
		if err != nil {
			return nil, err
		}
		switch o, other := w.ownerOf(live); o {
		case ownership.Other:
			return nil, w.guard.Conflict(cluster, fed, live, other)
		case ownership.Member:
			return w.adopt(ctx, cluster, fed, desired, live)
		}
		// Ours, and our cache did not know (it had not synced, or our
		// write's echo is late).
		if ownership.IsAdopted(live) {
			if desired, _, err = plan.WithAdopted(w.typ, desired); err != nil {
				return nil, err
			}
		}
		return w.update(ctx, cluster, fed, desired, &queues.Event{Reason: ReasonUpdate, Verb: "Updated"})
	}
	if err != nil {
		w.warnFailed(fed, ReasonCreateFailed, err, "Creating %s in cluster %s failed: %v", w.objs.What(objKey), cluster, err)
		return nil, fmt.Errorf("creating %s in cluster %s: %w", w.objs.What(objKey), cluster, err)
	}
	w.wrote(cluster, objKey, out)
	return ev, nil
}

// warnFailed records a member call of fed's copy that failed, but for a
// custom resource group the member was not joined for: the guard tells
// that once (GroupNotGranted), not at every retry.
func (w *Writer) warnFailed(fed *unstructured.Unstructured, reason string, err error, format string, args ...any) {
	if _, ok := guard.NotGrantedGroup(w.typ, err); ok {
		return
	}
	w.recorder.Eventf(fed, corev1.EventTypeWarning, reason, format, args...)
}

// adopt takes over a member's own object of fed's name when that is asked
// for, marking it adopted; otherwise it is a conflict.
func (w *Writer) adopt(ctx context.Context, cluster string, fed, desired *unstructured.Unstructured, live metav1.Object) (*queues.Event, error) {
	if why := federatedtypes.ManagedByMember(w.typ.Resource.GroupResource(), live); why != "" {
		return nil, w.guard.MemberManaged(cluster, fed, live, why)
	}
	if !w.guard.AdoptionAsked(cluster, fed) && !w.guard.AdoptedAtJoin(live) {
		return nil, w.guard.Conflict(cluster, fed, live, "")
	}
	marked, _, err := plan.WithAdopted(w.typ, desired)
	if err != nil {
		return nil, err
	}
	return w.update(ctx, cluster, fed, marked, &queues.Event{Reason: ReasonAdopt, Verb: "Adopted the existing"})
}

// wrote records what our write left, and the versions it passed through
// on the way: the copy is ours.
func (w *Writer) wrote(cluster, objKey string, out writtenCopy, passed ...string) {
	w.guard.Resolved(cluster, objKey)
	w.applied.remember(cluster, objKey, out, true, passed...)
}

// upgrade moves the fields of our create's Update entry to our apply's, as
// kubectl does for objects it created before applying them server-side.
// It returns the resourceVersion the move left ("" when none was needed).
func (w *Writer) upgrade(ctx context.Context, cluster string, desired *unstructured.Unstructured, out writtenCopy) (string, error) {
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(out, sets.New(FieldManager), FieldManager)
	if err != nil || patch == nil {
		return "", err
	}
	res, err := w.memberResource(cluster, desired.GetNamespace())
	if err != nil {
		return "", err
	}
	moved := ""
	// The patch tests the resourceVersion it was made from: the member
	// writing the copy meanwhile (its HPA scaling a workload we just wrote,
	// its controllers writing status) conflicts it. Again from what the
	// member holds then, within client-go's budget of attempts.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if patch == nil {
			live, err := res.Get(ctx, desired.GetName(), metav1.GetOptions{})
			if err != nil {
				return err
			}
			if patch, err = csaupgrade.UpgradeManagedFieldsPatch(live, sets.New(FieldManager), FieldManager); err != nil || patch == nil {
				return err
			}
		}
		result, err := res.Patch(ctx, desired.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{})
		patch = nil
		w.countWrite(cluster, "patch", err)
		if err == nil {
			moved = result.GetResourceVersion()
		}
		return err
	})
	return moved, err
}

// apply sends desired to a member. An object the member already holds
// without our fixed pod marks, not in our label-filtered cache (a
// Deployment or Job being adopted), cannot take them: it is sent again
// without them (and once adopted, the cache tells the next writes the
// same: keepUnmarked).
func (w *Writer) apply(ctx context.Context, cluster string, desired *unstructured.Unstructured) (writtenCopy, error) {
	out, err := w.applyIn(ctx, cluster, desired)
	w.countWrite(cluster, "apply", err)
	if apierrors.IsInvalid(err) && w.typ.Pods.HasFixed(desired) {
		if bare, _, berr := plan.Unmarked(w.typ, desired); berr == nil {
			out, err = w.applyIn(ctx, cluster, bare)
			w.countWrite(cluster, "apply", err)
		}
	}
	return out, err
}

// readLive reads a copy from its member when our cache cannot tell.
func (w *Writer) readLive(ctx context.Context, cluster string, fed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	res, err := w.memberResource(cluster, fed.GetNamespace())
	if err != nil {
		return nil, err
	}
	live, err := res.Get(ctx, fed.GetName(), metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		objKey := fedobject.Key(fed.GetNamespace(), fed.GetName())
		w.warnFailed(fed, ReasonUpdateFailed, err, "Reading %s in cluster %s failed: %v", w.objs.What(objKey), cluster, err)
		return nil, fmt.Errorf("reading %s in cluster %s: %w", w.objs.What(objKey), cluster, err)
	}
	return live, err
}

// deleteCopy deletes our copy in a member; suffix tells why in the event.
// Only what we created is deleted: an adopted copy is left to its member
// (unless the federated object asks otherwise), as is a namespace holding
// objects that are not our copies; an object that is not ours is not
// touched.
func (w *Writer) deleteCopy(ctx context.Context, cluster string, fed *unstructured.Unstructured, suffix string) (*queues.Event, error) {
	if plan.Shared(w.typ, fed) {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, w.opts.MemberTimeout)
	defer cancel()
	ns, name := fed.GetNamespace(), fed.GetName()
	objKey := fedobject.Key(ns, name)
	ours, err := w.ownCopy(ctx, cluster, fed)
	if err != nil {
		return nil, err
	}
	if ours == nil {
		w.applied.forget(cluster, objKey)
		return nil, nil
	}
	if ours.ofAnother(fed) {
		// A later object's copy (a tombstone older than it, restored from
		// a backup say): not this deletion's to touch.
		return nil, nil
	}
	if ours.adopted && !deletesAdopted(fed) {
		if err := w.orphanCopy(ctx, cluster, fed); err != nil {
			return nil, err
		}
		return &queues.Event{Reason: ReasonOrphan, Verb: "Left the adopted", Suffix: " to the member"}, nil
	}
	if w.typ.Namespace {
		foreign, err := w.foreignObjects(ctx, cluster, name)
		if err != nil {
			w.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonDeleteFailed, "Listing what %s holds in cluster %s failed: %v", w.objs.What(objKey), cluster, err)
			return nil, fmt.Errorf("listing what %s holds in cluster %s: %w", w.objs.What(objKey), cluster, err)
		}
		if len(foreign) > 0 {
			if err := w.orphanCopy(ctx, cluster, fed); err != nil {
				return nil, err
			}
			w.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonOrphan, "Left %s in cluster %s to the member instead of deleting it: it holds objects the federation did not create: %s",
				w.objs.What(objKey), cluster, namedList(foreign))
			return nil, nil
		}
	}
	res, err := w.memberResource(cluster, ns)
	if err != nil {
		return nil, err
	}
	opts := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
	if ours.uid != "" {
		// Exactly the copy found ours.
		opts.Preconditions = &metav1.Preconditions{UID: ptr.To(ours.uid)}
	}
	err = res.Delete(ctx, name, opts)
	w.countWrite(cluster, "delete", err)
	if err != nil && !apierrors.IsNotFound(err) {
		w.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonDeleteFailed, "Deleting %s in cluster %s failed: %v", w.objs.What(objKey), cluster, err)
		return nil, fmt.Errorf("deleting %s in cluster %s: %w", w.objs.What(objKey), cluster, err)
	}
	w.applied.forget(cluster, objKey)
	return &queues.Event{Reason: ReasonDelete, Verb: "Deleted", Suffix: suffix}, nil
}

// orphanCopy removes our labels, hash and adopted mark from our copy in a
// member, so that it becomes the member's own. An object that is not ours
// is not touched.
func (w *Writer) orphanCopy(ctx context.Context, cluster string, fed *unstructured.Unstructured) error {
	if plan.Shared(w.typ, fed) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, w.opts.MemberTimeout)
	defer cancel()
	ns, name := fed.GetNamespace(), fed.GetName()
	ours, err := w.ownCopy(ctx, cluster, fed)
	if err != nil || ours == nil || ours.ofAnother(fed) {
		return err
	}
	res, err := w.memberResource(cluster, ns)
	if err != nil {
		return err
	}
	w.applied.forget(cluster, fedobject.Key(ns, name))
	labels := map[string]any{federationv1beta1.FederationLabel: nil, federationv1beta1.FederationUIDLabel: nil}
	if w.typ.Namespace {
		labels[memberrbac.CreatedByLabel] = nil                         // and its RBAC rights there with it
		labels[memberrbac.AdoptedByLabel(w.members.Federation())] = nil // and its right to write in it
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      labels,
		"annotations": map[string]any{federationv1beta1.AppliedHashAnnotation: nil, federationv1beta1.ObjectUIDAnnotation: nil, federationv1beta1.AdoptedAnnotation: nil},
	}})
	_, err = res.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
	w.countWrite(cluster, "patch", err)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("orphaning %s in cluster %s: %w", w.objs.What(fedobject.Key(ns, name)), cluster, err)
	}
	return nil
}

// memberResource is the type's resource in a member's namespace.
func (w *Writer) memberResource(cluster, ns string) (dynamic.ResourceInterface, error) {
	client, err := w.members.Client(cluster)
	if err != nil {
		return nil, err
	}
	return client.Resource(w.typ.Resource).Namespace(ns), nil
}

func (w *Writer) countWrite(cluster, verb string, err error) {
	syncmetrics.Writes.WithLabelValues(w.typ.Name, cluster, verb).Inc()
	if err != nil && !apierrors.IsNotFound(err) {
		syncmetrics.Errors.WithLabelValues(w.typ.Name, cluster).Inc()
	}
}

// Last returns what the writer remembers of the copy of objKey in cluster.
func (w *Writer) Last(cluster, objKey string) (plan.LastWrite, bool) {
	o, ok := w.applied.get(cluster, objKey)
	return o.lastWrite(), ok
}

// Remember records a copy a reconcile found in sync as ours
// (plan.Verdict.Remember).
func (w *Writer) Remember(cluster, objKey string, cur *unstructured.Unstructured) {
	w.applied.remember(cluster, objKey, cur, false)
}

// stale reports whether what a task was judged on no longer holds: the
// member changed the copy, or another write of ours ended, since the
// reconcile judged it. Such a task is dropped unwritten and the object
// reconciled again, which judges it anew: the writer never judges.
func (w *Writer) stale(cluster string, t Task) bool {
	if t.Basis == "" {
		return false
	}
	objKey := fedobject.Key(t.Fed.GetNamespace(), t.Fed.GetName())
	cur, ok := w.members.Get(cluster, w.typ.Resource, t.Fed.GetNamespace(), t.Fed.GetName())
	if !ok {
		cur = nil
	}
	last, known := w.Last(cluster, objKey)
	if plan.Basis(cur, last, known) == t.Basis {
		return false
	}
	w.outcomes.add(Outcome{ObjKey: objKey, Requeue: true})
	return true
}

// releaseIfNotOurs removes a copy the member holds when what it names is
// no longer the federation's there (refErr from referencesOurs): it would
// act through another's object (the member's ServiceAccount of the same
// name made after ours went, say).
func (w *Writer) releaseIfNotOurs(ctx context.Context, cluster string, t queues.Task, refErr error) (*queues.Event, error) {
	var notOurs *guard.ErrReferenceNotOurs
	if !errors.As(refErr, &notOurs) {
		return nil, refErr
	}
	if _, exists := w.members.Get(cluster, w.typ.Resource, t.Fed.GetNamespace(), t.Fed.GetName()); !exists {
		return nil, refErr
	}
	ev, err := w.deleteCopy(ctx, cluster, t.Fed, ": "+notOurs.Msg)
	if err != nil {
		return nil, err
	}
	w.recorder.Eventf(t.Fed, corev1.EventTypeWarning, guard.ReasonReferenceNotOurs, "%s removed from cluster %s: %v", w.objs.What(fedobject.Key(t.Fed.GetNamespace(), t.Fed.GetName())), cluster, refErr)
	return ev, refErr
}
