package propagation

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/memberwrites"
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
	switch t.Action {
	case memberwrites.Delete:
		return c.deleteCopy(ctx, cluster, t.Fed, "")
	case memberwrites.Orphan:
		return nil, c.orphanCopy(ctx, cluster, t.Fed)
	case memberwrites.Unplace:
		if _, ok := c.inSync(cluster, t.Fed, t.Desired, t.Hash, false); ok {
			return nil, nil
		}
		return c.deleteCopy(ctx, cluster, t.Fed, ": no longer selected")
	}
	if _, ok := c.inSync(cluster, t.Fed, t.Desired, t.Hash, true); ok {
		return nil, nil
	}
	return c.applyCopy(ctx, cluster, t.Fed, t.Desired, t.Hash)
}

// applyCopy applies desired to a member with server-side apply.
func (c *Controller) applyCopy(ctx context.Context, cluster string, fed, desired *unstructured.Unstructured, hash string) (*memberwrites.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.MemberTimeout)
	defer cancel()
	ns, name := fed.GetNamespace(), fed.GetName()
	objKey := key(ns, name)
	cur, exists := c.members.Get(cluster, c.typ.Resource, ns, name)
	last, appliedBefore := c.applied.get(cluster, objKey)
	ev := &memberwrites.Event{Reason: ReasonUpdate, Verb: "Updated"}
	// Changed there while what we send stayed the same (a member's HPA
	// changing replicas the federation follows is an update, not drift).
	if exists && appliedBefore && last.version != version(cur) && cur.GetAnnotations()[federationv1beta1.AppliedHashAnnotation] == hash {
		ev = &memberwrites.Event{Reason: ReasonUpdate, Verb: "Restored", Suffix: ": it was changed there"}
	}
	// Written before but not in our cache: not there yet, deleted there, or
	// our label taken off. (Never written and not in a synced cache: absent
	// or unlabelled, which the apply's answer tells apart.)
	firstWrite := !exists && !appliedBefore && c.members.Synced(cluster, c.typ.Resource)
	if firstWrite {
		ev = &memberwrites.Event{Reason: ReasonCreate, Verb: "Created"}
	} else if !exists {
		live, err := c.readLive(ctx, cluster, fed)
		switch {
		case apierrors.IsNotFound(err):
			ev = &memberwrites.Event{Reason: ReasonCreate, Verb: "Created"}
			if appliedBefore {
				ev = &memberwrites.Event{Reason: ReasonCreate, Verb: "Recreated", Suffix: ": it was deleted there"}
			}
		case err != nil:
			return nil, err
		case live.GetLabels()[federationv1beta1.FederationLabel] != c.members.Federation():
			ev = &memberwrites.Event{Reason: ReasonAdopt, Verb: "Adopted the existing"}
		case InSync(live, desired, hash, last.version):
			// Our own write, not yet in the cache.
			return nil, nil
		}
	}
	start := time.Now()
	out, err := c.apply(ctx, cluster, desired)
	if err != nil {
		failed := ReasonUpdateFailed
		if ev.Reason == ReasonCreate {
			failed = ReasonCreateFailed
		}
		c.recorder.Eventf(fed, corev1.EventTypeWarning, failed, "Applying %s in cluster %s failed: %v", c.what(objKey), cluster, err)
		return nil, fmt.Errorf("applying %s in cluster %s: %w", c.what(objKey), cluster, err)
	}
	if firstWrite && adopted(out) {
		ev = &memberwrites.Event{Reason: ReasonAdopt, Verb: "Adopted the existing"}
	}
	klog.FromContext(ctx).V(2).Info("Applied to member", "cluster", cluster, "object", objKey, "took", time.Since(start))
	c.applied.remember(cluster, objKey, out, true)
	return ev, nil
}

// apply sends desired to a member. A Job the member already runs, not in
// our label-filtered cache, cannot change its pod template: it is sent
// again without our pod label (and once adopted, the cache tells the next
// writes the same).
func (c *Controller) apply(ctx context.Context, cluster string, desired *unstructured.Unstructured) (*metav1.PartialObjectMetadata, error) {
	out, err := c.members.Apply(ctx, cluster, c.typ.Resource, desired, FieldManager)
	c.countWrite(cluster, "apply", err)
	if apierrors.IsInvalid(err) && c.typ.Replicas != nil && c.typ.Replicas.FixedTemplate && podLabelled(desired) {
		if bare, _, berr := withoutPodLabel(desired); berr == nil {
			out, err = c.members.Apply(ctx, cluster, c.typ.Resource, bare, FieldManager)
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

// adopted tells, from what a member answered to our first apply of an
// object, whether the object was already there: then another field manager
// than ours holds some of its fields. A first write is applied without
// reading the member first, so that a new object costs one call per member.
func adopted(applied *metav1.PartialObjectMetadata) bool {
	for _, entry := range applied.ManagedFields {
		if entry.Manager != FieldManager {
			return true
		}
	}
	return false
}

// deleteCopy deletes a member copy; suffix tells why in the event.
func (c *Controller) deleteCopy(ctx context.Context, cluster string, fed *unstructured.Unstructured, suffix string) (*memberwrites.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.MemberTimeout)
	defer cancel()
	ns, name := fed.GetNamespace(), fed.GetName()
	res, err := c.memberResource(cluster, ns)
	if err != nil {
		return nil, err
	}
	err = res.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
	c.countWrite(cluster, "delete", err)
	if err != nil && !apierrors.IsNotFound(err) {
		c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonDeleteFailed, "Deleting %s in cluster %s failed: %v", c.what(key(ns, name)), cluster, err)
		return nil, fmt.Errorf("deleting %s in cluster %s: %w", c.what(key(ns, name)), cluster, err)
	}
	c.applied.forget(cluster, key(ns, name))
	return &memberwrites.Event{Reason: ReasonDelete, Verb: "Deleted", Suffix: suffix}, nil
}

// orphanCopy removes our label and hash from a member copy, so that it
// becomes the member's own.
func (c *Controller) orphanCopy(ctx context.Context, cluster string, fed *unstructured.Unstructured) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.MemberTimeout)
	defer cancel()
	ns, name := fed.GetNamespace(), fed.GetName()
	res, err := c.memberResource(cluster, ns)
	if err != nil {
		return err
	}
	c.applied.forget(cluster, key(ns, name))
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      map[string]any{federationv1beta1.FederationLabel: nil},
		"annotations": map[string]any{federationv1beta1.AppliedHashAnnotation: nil},
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
	syncMetrics.writes.WithLabelValues(c.typ.Name, cluster, verb).Inc()
	if err != nil && !apierrors.IsNotFound(err) {
		syncMetrics.errors.WithLabelValues(c.typ.Name, cluster).Inc()
	}
}

// what names a federated object in messages: "ConfigMap ns/a".
func (c *Controller) what(objKey string) string {
	return c.typ.Kind + " " + objKey
}
