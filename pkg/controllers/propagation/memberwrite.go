package propagation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/csaupgrade"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/syncmetrics"
	"github.com/federation-v1/federation/pkg/controllers/propagation/memberwrites"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/memberrbac"
	"github.com/federation-v1/federation/pkg/ownership"
)

// stillWanted reports whether a task should run: its cluster is Ready and,
// unless the task lets the copy go, its object is neither gone nor being
// deleted (the deletion handles it).
func (c *Controller) stillWanted(cluster string, t memberwrites.Task) bool {
	if !c.members.Usable(cluster) {
		return false
	}
	if t.Action.Releases() {
		return true
	}
	fed, err := c.get(t.Fed.GetNamespace(), t.Fed.GetName())
	return err == nil && fed.GetDeletionTimestamp() == nil
}

// writeMember makes one member hold what the task says, and returns what
// it wrote (nil when nothing).
func (c *Controller) writeMember(ctx context.Context, cluster string, t memberwrites.Task) (*memberwrites.Event, error) {
	// Releases touch only copies found ours (by label and UID): they are
	// let go wherever they are.
	if t.Action == memberwrites.Apply {
		if err := c.mayWriteIn(ctx, cluster, t.Fed.GetNamespace()); err != nil {
			var notOurs *errNamespaceNotOurs
			if errors.As(err, &notOurs) {
				c.notWritten(cluster, t.Fed, ReasonNamespaceNotOurs, err)
			}
			return nil, err
		}
	}
	switch t.Action {
	case memberwrites.Delete:
		return c.deleteCopy(ctx, cluster, t.Fed, "")
	case memberwrites.Orphan:
		return nil, c.orphanCopy(ctx, cluster, t.Fed)
	case memberwrites.Unplace:
		if _, ok := c.holdsDesired(cluster, t.Fed, t.Desired, t.Hash, false); ok {
			return nil, nil
		}
		// Our caches said so; live reads must agree (unplace.go).
		if confirmed, err := c.confirmUnplace(ctx, cluster, t.Fed); !confirmed || err != nil {
			return nil, err
		}
		return c.deleteCopy(ctx, cluster, t.Fed, ": no longer selected")
	}
	// Before the in-sync check: a copy in sync is sent here again when
	// what it names left our cache, or turned out another's (compare,
	// referencesCached, checkUnheld).
	objKey := key(t.Fed.GetNamespace(), t.Fed.GetName())
	err := c.referencesOurs(ctx, cluster, t.Fed, t.Desired)
	c.unheld.checked(copyAt{cluster, objKey})
	var cannotName *errCannotName
	if errors.As(err, &cannotName) {
		// The same copy is refused until the federated object changes.
		return nil, &errRefusedByMember{err: err, wait: c.refusedWrites.Next(appliedKey(cluster, objKey), t.Hash)}
	}
	if err != nil {
		return c.releaseIfNotOurs(ctx, cluster, t, err)
	}
	if _, ok := c.holdsDesired(cluster, t.Fed, t.Desired, t.Hash, true); ok {
		return nil, nil
	}
	ev, err := c.applyWithAccess(ctx, cluster, t.Fed, t.Desired, t.Hash)
	return ev, c.spaceOutRefused(cluster, t, err)
}

// applyCopy makes a member hold desired: a new copy is created (which
// fails when the member has an object of that name), an existing copy of
// ours is applied server-side. An object that is not ours is left alone
// (a conflict) unless it is the member's own and adoption is asked for.
func (c *Controller) applyCopy(ctx context.Context, cluster string, fed, desired *unstructured.Unstructured, hash string) (*memberwrites.Event, error) {
	if plan.Shared(c.typ, fed) {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.MemberTimeout)
	defer cancel()
	ns, name := fed.GetNamespace(), fed.GetName()
	objKey := key(ns, name)
	cur, exists := c.members.Get(cluster, c.typ.Resource, ns, name)
	last, appliedBefore := c.applied.get(cluster, objKey)
	if exists {
		// Our label's name, another federation's UID.
		if o, other := c.ownerOf(cur); o != ownership.Us {
			return nil, c.conflict(cluster, fed, cur, other)
		}
	}
	// Before any member call: a copy whose repairs are spent costs none.
	if err := c.repairAllowed(cluster, fed, hash); err != nil {
		return nil, err
	}
	ev := &memberwrites.Event{Reason: ReasonUpdate, Verb: "Updated"}
	// Changed there while what we send stayed the same (a member's HPA
	// changing replicas the federation follows is an update, not drift).
	if exists && appliedBefore && !plan.SameVersion(last.version, cur) && cur.GetAnnotations()[federationv1beta1.AppliedHashAnnotation] == hash {
		ev = &memberwrites.Event{Reason: ReasonUpdate, Verb: "Restored", Suffix: ": it was changed there"}
	}
	created := &memberwrites.Event{Reason: ReasonCreate, Verb: "Created"}
	// Never written and not in a synced cache: absent, or not ours, which
	// the create's answer tells apart. Written before but not in our
	// cache: not there yet, deleted there, or our label taken off.
	if !exists && !appliedBefore && !c.conflictKnown(cluster, objKey) && c.members.Synced(cluster, c.typ.Resource) {
		return c.createCopy(ctx, cluster, fed, desired, created)
	}
	if !exists {
		live, err := c.readLive(ctx, cluster, fed)
		if apierrors.IsNotFound(err) {
			if appliedBefore {
				created = &memberwrites.Event{Reason: ReasonCreate, Verb: "Recreated", Suffix: ": it was deleted there"}
			}
			return c.createCopy(ctx, cluster, fed, desired, created)
		}
		if err != nil {
			return nil, err
		}
		if o, other := c.ownerOf(live); o == ownership.Other {
			return nil, c.conflict(cluster, fed, live, other)
		} else if o == ownership.Member {
			return c.adopt(ctx, cluster, fed, desired, live)
		}
		if ownership.IsAdopted(live) && !ownership.IsAdopted(desired) {
			var err error
			if desired, hash, err = plan.WithAdopted(c.typ, desired); err != nil {
				return nil, err
			}
		}
		if plan.InSync(live, desired, hash, last.version) {
			// Our own write, not yet in the cache.
			return nil, nil
		}
	}
	return c.update(ctx, cluster, fed, desired, ev)
}

// update applies desired over our copy, forced: the copy is ours, and
// fields the member changed are taken back.
func (c *Controller) update(ctx context.Context, cluster string, fed, desired *unstructured.Unstructured, ev *memberwrites.Event) (*memberwrites.Event, error) {
	objKey := key(fed.GetNamespace(), fed.GetName())
	start := time.Now()
	out, err := c.apply(ctx, cluster, desired)
	var passed []string
	if err == nil && createdByUs(out) {
		// The fields our create set belong to its Update entry, not to our
		// applies, which would never remove them: hand them over (once),
		// and apply again, as what we sent may have left some out.
		passed = append(passed, out.GetResourceVersion())
		var upgraded string
		if upgraded, err = c.upgrade(ctx, cluster, desired, out); err == nil {
			passed = append(passed, upgraded)
			out, err = c.apply(ctx, cluster, desired)
		}
	}
	if err != nil {
		failed := ReasonUpdateFailed
		if ev.Reason == ReasonCreate {
			failed = ReasonCreateFailed
		}
		c.recorder.Eventf(fed, corev1.EventTypeWarning, failed, "Applying %s in cluster %s failed: %v", c.what(objKey), cluster, err)
		return nil, fmt.Errorf("applying %s in cluster %s: %w", c.what(objKey), cluster, err)
	}
	klog.FromContext(ctx).V(2).Info("Applied to member", "cluster", cluster, "object", objKey, "took", time.Since(start))
	c.wrote(cluster, objKey, out, passed...)
	return ev, nil
}

// createCopy creates a new copy: one call. When the member already has an
// object of the name, it is read to tell whose it is.
func (c *Controller) createCopy(ctx context.Context, cluster string, fed, desired *unstructured.Unstructured, ev *memberwrites.Event) (*memberwrites.Event, error) {
	objKey := key(fed.GetNamespace(), fed.GetName())
	out, err := c.createIn(ctx, cluster, desired)
	c.countWrite(cluster, "create", err)
	if apierrors.IsAlreadyExists(err) {
		live, err := c.readLive(ctx, cluster, fed)
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("creating %s in cluster %s: it was there, then gone: trying again", c.what(objKey), cluster)
		}
		if err != nil {
			return nil, err
		}
		switch o, other := c.ownerOf(live); o {
		case ownership.Other:
			return nil, c.conflict(cluster, fed, live, other)
		case ownership.Member:
			return c.adopt(ctx, cluster, fed, desired, live)
		}
		// Ours, and our cache did not know (it had not synced, or our
		// write's echo is late).
		if ownership.IsAdopted(live) {
			if desired, _, err = plan.WithAdopted(c.typ, desired); err != nil {
				return nil, err
			}
		}
		return c.update(ctx, cluster, fed, desired, &memberwrites.Event{Reason: ReasonUpdate, Verb: "Updated"})
	}
	if err != nil {
		c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonCreateFailed, "Creating %s in cluster %s failed: %v", c.what(objKey), cluster, err)
		return nil, fmt.Errorf("creating %s in cluster %s: %w", c.what(objKey), cluster, err)
	}
	c.wrote(cluster, objKey, out)
	return ev, nil
}

// adopt takes over a member's own object of fed's name when that is asked
// for, marking it adopted; otherwise it is a conflict.
func (c *Controller) adopt(ctx context.Context, cluster string, fed, desired *unstructured.Unstructured, live metav1.Object) (*memberwrites.Event, error) {
	if why := federatedtypes.ManagedByMember(c.typ.Resource.GroupResource(), live); why != "" {
		return nil, c.memberManaged(cluster, fed, live, why)
	}
	if !c.adoptionAsked(cluster, fed) && !c.adoptedAtJoin(live) {
		return nil, c.conflict(cluster, fed, live, "")
	}
	marked, _, err := plan.WithAdopted(c.typ, desired)
	if err != nil {
		return nil, err
	}
	return c.update(ctx, cluster, fed, marked, &memberwrites.Event{Reason: ReasonAdopt, Verb: "Adopted the existing"})
}

// wrote records what our write left, and the versions it passed through
// on the way: the copy is ours.
func (c *Controller) wrote(cluster, objKey string, out writtenCopy, passed ...string) {
	c.conflicts.Delete(appliedKey(cluster, objKey))
	c.applied.remember(cluster, objKey, out, true, passed...)
}

// createdByUs reports whether a copy still has the fields set by our
// create under the create's own (Update) entry.
func createdByUs(obj writtenCopy) bool {
	return slices.ContainsFunc(obj.GetManagedFields(), func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == FieldManager && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == ""
	})
}

// upgrade moves the fields of our create's Update entry to our apply's, as
// kubectl does for objects it created before applying them server-side.
// It returns the resourceVersion the move left ("" when none was needed).
func (c *Controller) upgrade(ctx context.Context, cluster string, desired *unstructured.Unstructured, out writtenCopy) (string, error) {
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(out, sets.New(FieldManager), FieldManager)
	if err != nil || patch == nil {
		return "", err
	}
	res, err := c.memberResource(cluster, desired.GetNamespace())
	if err != nil {
		return "", err
	}
	moved, err := res.Patch(ctx, desired.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{})
	c.countWrite(cluster, "patch", err)
	if apierrors.IsConflict(err) {
		// The member changed it meanwhile (its HPA scaling a workload we
		// just wrote): once more, from what it holds now.
		live, gerr := res.Get(ctx, desired.GetName(), metav1.GetOptions{})
		if gerr != nil {
			return "", gerr
		}
		if patch, err = csaupgrade.UpgradeManagedFieldsPatch(live, sets.New(FieldManager), FieldManager); err != nil || patch == nil {
			return "", err
		}
		moved, err = res.Patch(ctx, desired.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{})
		c.countWrite(cluster, "patch", err)
	}
	if err != nil {
		return "", err
	}
	return moved.GetResourceVersion(), nil
}

// apply sends desired to a member. An object the member already holds
// without our fixed pod marks, not in our label-filtered cache (a
// Deployment or Job being adopted), cannot take them: it is sent again
// without them (and once adopted, the cache tells the next writes the
// same: keepUnmarked).
func (c *Controller) apply(ctx context.Context, cluster string, desired *unstructured.Unstructured) (writtenCopy, error) {
	out, err := c.applyIn(ctx, cluster, desired)
	c.countWrite(cluster, "apply", err)
	if apierrors.IsInvalid(err) && c.typ.Pods.HasFixed(desired) {
		if bare, _, berr := plan.Unmarked(c.typ, desired); berr == nil {
			out, err = c.applyIn(ctx, cluster, bare)
			c.countWrite(cluster, "apply", err)
		}
	}
	return out, err
}

// readLive reads a copy from its member when our cache cannot tell.
func (c *Controller) readLive(ctx context.Context, cluster string, fed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	res, err := c.memberResource(cluster, fed.GetNamespace())
	if err != nil {
		return nil, err
	}
	live, err := res.Get(ctx, fed.GetName(), metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		objKey := key(fed.GetNamespace(), fed.GetName())
		c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonUpdateFailed, "Reading %s in cluster %s failed: %v", c.what(objKey), cluster, err)
		return nil, fmt.Errorf("reading %s in cluster %s: %w", c.what(objKey), cluster, err)
	}
	return live, err
}

// deleteCopy deletes our copy in a member; suffix tells why in the event.
// Only what we created is deleted: an adopted copy is left to its member
// (unless the federated object asks otherwise), as is a namespace holding
// objects that are not our copies; an object that is not ours is not
// touched.
func (c *Controller) deleteCopy(ctx context.Context, cluster string, fed *unstructured.Unstructured, suffix string) (*memberwrites.Event, error) {
	if plan.Shared(c.typ, fed) {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.MemberTimeout)
	defer cancel()
	ns, name := fed.GetNamespace(), fed.GetName()
	objKey := key(ns, name)
	ours, err := c.ownCopy(ctx, cluster, fed)
	if err != nil {
		return nil, err
	}
	if ours == nil {
		c.applied.forget(cluster, objKey)
		return nil, nil
	}
	if ours.ofAnother(fed) {
		// A later object's copy (a tombstone older than it, restored from
		// a backup say): not this deletion's to touch.
		return nil, nil
	}
	if ours.adopted && !deletesAdopted(fed) {
		if err := c.orphanCopy(ctx, cluster, fed); err != nil {
			return nil, err
		}
		return &memberwrites.Event{Reason: ReasonOrphan, Verb: "Left the adopted", Suffix: " to the member"}, nil
	}
	if c.typ.Namespace {
		foreign, err := c.foreignObjects(ctx, cluster, name)
		if err != nil {
			c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonDeleteFailed, "Listing what %s holds in cluster %s failed: %v", c.what(objKey), cluster, err)
			return nil, fmt.Errorf("listing what %s holds in cluster %s: %w", c.what(objKey), cluster, err)
		}
		if len(foreign) > 0 {
			if err := c.orphanCopy(ctx, cluster, fed); err != nil {
				return nil, err
			}
			c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonOrphan, "Left %s in cluster %s to the member instead of deleting it: it holds objects the federation did not create: %s",
				c.what(objKey), cluster, namedList(foreign))
			return nil, nil
		}
	}
	res, err := c.memberResource(cluster, ns)
	if err != nil {
		return nil, err
	}
	opts := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
	if ours.uid != "" {
		// Exactly the copy found ours.
		opts.Preconditions = &metav1.Preconditions{UID: ptr.To(ours.uid)}
	}
	err = res.Delete(ctx, name, opts)
	c.countWrite(cluster, "delete", err)
	if err != nil && !apierrors.IsNotFound(err) {
		c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonDeleteFailed, "Deleting %s in cluster %s failed: %v", c.what(objKey), cluster, err)
		return nil, fmt.Errorf("deleting %s in cluster %s: %w", c.what(objKey), cluster, err)
	}
	c.applied.forget(cluster, objKey)
	return &memberwrites.Event{Reason: ReasonDelete, Verb: "Deleted", Suffix: suffix}, nil
}

// orphanCopy removes our labels, hash and adopted mark from our copy in a
// member, so that it becomes the member's own. An object that is not ours
// is not touched.
func (c *Controller) orphanCopy(ctx context.Context, cluster string, fed *unstructured.Unstructured) error {
	if plan.Shared(c.typ, fed) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.MemberTimeout)
	defer cancel()
	ns, name := fed.GetNamespace(), fed.GetName()
	ours, err := c.ownCopy(ctx, cluster, fed)
	if err != nil || ours == nil || ours.ofAnother(fed) {
		return err
	}
	res, err := c.memberResource(cluster, ns)
	if err != nil {
		return err
	}
	c.applied.forget(cluster, key(ns, name))
	labels := map[string]any{federationv1beta1.FederationLabel: nil, federationv1beta1.FederationUIDLabel: nil}
	if c.typ.Namespace {
		labels[memberrbac.CreatedByLabel] = nil                         // and its RBAC rights there with it
		labels[memberrbac.AdoptedByLabel(c.members.Federation())] = nil // and its right to write in it
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      labels,
		"annotations": map[string]any{federationv1beta1.AppliedHashAnnotation: nil, federationv1beta1.ObjectUIDAnnotation: nil, federationv1beta1.AdoptedAnnotation: nil},
	}})
	_, err = res.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
	c.countWrite(cluster, "patch", err)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("orphaning %s in cluster %s: %w", c.what(key(ns, name)), cluster, err)
	}
	return nil
}

// memberResource is the type's resource in a member's namespace.
func (c *Controller) memberResource(cluster, ns string) (dynamic.ResourceInterface, error) {
	client, err := c.members.Client(cluster)
	if err != nil {
		return nil, err
	}
	return client.Resource(c.typ.Resource).Namespace(ns), nil
}

// memberWritten follows up the end of a member write: the object's event
// once its copies are written, its propagation time, and another look at
// it when its Propagated condition must change, its deletion can go on,
// or an event taken for our write's echo was somebody else's change.
func (c *Controller) memberWritten(d memberwrites.Done) {
	if d.Settled {
		c.recordCopies(d.Obj, d.Events)
	}
	if d.AllWritten {
		c.changes.propagated(d.ObjKey)
		c.initial.settled(d.ObjKey)
	}
	switch {
	case d.Settled && (d.Err != nil || d.HadFailure || d.StatusBehind || d.Task.Action.Releases()):
		// (Otherwise the writes of a type with status bring the object
		// back with their members' watch events.)
		c.queue.Add(d.ObjKey)
	case d.EventWhileRunning && !c.holdsOurWrite(d.Cluster, d.ObjKey):
		c.queue.Add(d.ObjKey)
	}
}

func (c *Controller) countWrite(cluster, verb string, err error) {
	syncmetrics.Writes.WithLabelValues(c.typ.Name, cluster, verb).Inc()
	if err != nil && !apierrors.IsNotFound(err) {
		syncmetrics.Errors.WithLabelValues(c.typ.Name, cluster).Inc()
	}
}

// what names a federated object in messages: "ConfigMap ns/a".
func (c *Controller) what(objKey string) string {
	return c.typ.Kind + " " + objKey
}
