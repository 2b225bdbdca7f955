package release

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/federation-v1/federation/pkg/controllers/propagation/hpatarget"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/tombstone"
)

// A federated object other than a Namespace is deleted at once by the
// federation apiserver, which first records the deletion in a tombstone
// (package tombstone). The controller of the object's type deletes the
// member copies from it, as it would for an object held by our finalizer,
// and then the tombstone. A tombstone is never a reason to delete anything
// else: only the copies of the object it names, ours and not adopted
// (unless the object asked), in the clusters that held them.

// TombstoneIndex indexes tombstones by resource and object key
// (IndexTombstone).
const TombstoneIndex = "federatedObject"

// tombstoneGrace is how long a tombstone whose object is still there, and
// not being deleted, is kept: its deletion may not have reached our cache
// yet. After it, the object is read at the federation: if it is still there
// the deletion failed, and the tombstone goes.
const tombstoneGrace = 30 * time.Second

// configMaps are where tombstones are kept.
var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// buried is one tombstone: its own name and UID, and its record.
type buried struct {
	name   string
	uid    types.UID
	record tombstone.Record
}

func TombstoneIndexKey(gr schema.GroupResource, objKey string) string {
	return tombstone.LabelValue(gr) + "|" + objKey
}

// IndexTombstone indexes a tombstone by the resource and key of its object.
func IndexTombstone(obj any) ([]string, error) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok || cm.Labels[tombstone.Label] == "" {
		return nil, nil
	}
	rec, err := tombstone.Parse(cm.Data)
	if err != nil {
		return nil, nil
	}
	return []string{TombstoneIndexKey(rec.Resource, rec.ObjectKey())}, nil
}

// tombstonesOf returns the tombstones of the object of key, oldest first.
func (r *Releaser) tombstonesOf(objKey string) []buried {
	if r.tombstones == nil {
		return nil
	}
	objs, err := r.tombstones.ByIndex(TombstoneIndex, TombstoneIndexKey(r.typ.Resource.GroupResource(), objKey))
	if err != nil {
		return nil
	}
	var out []buried
	for _, o := range objs {
		cm := o.(*corev1.ConfigMap)
		if rec, err := tombstone.Parse(cm.Data); err == nil {
			out = append(out, buried{name: cm.Name, uid: cm.UID, record: rec})
		}
	}
	slices.SortFunc(out, func(a, b buried) int {
		if d := a.record.Deleted.Compare(b.record.Deleted); d != 0 {
			return d
		}
		return cmp.Compare(a.name, b.name)
	})
	return out
}

// Tombstones acts on the tombstones of key, and reports whether that is
// all the reconcile should do now: the object is gone and its copies are being let
// go, or our cache still holds an object whose deletion is recorded (it
// is not reconciled meanwhile: planning it would write its status and act
// on others, as an HPA marks its target). An object there again under
// another UID keeps the copies: its tombstones of earlier objects go.
func (r *Releaser) Tombstones(ctx context.Context, objKey string) (bool, Result, error) {
	var res Result
	gone, err := r.actOnTombstones(ctx, objKey, &res)
	return gone, res, err
}

// actOnTombstones is Tombstones, telling what the engine must do in res.
func (r *Releaser) actOnTombstones(ctx context.Context, objKey string, res *Result) (bool, error) {
	graves := r.tombstonesOf(objKey)
	if len(graves) == 0 {
		return false, nil
	}
	if _, never := r.NeverPropagated(objKey); never {
		// No copy was ever made.
		return false, r.dropTombstones(ctx, objKey, graves, "its namespace is never propagated")
	}
	cur, err := r.objs.Get(fedobject.SplitKey(objKey))
	switch {
	case apierrors.IsNotFound(err):
		return true, r.bury(ctx, objKey, graves, res)
	case err != nil:
		return true, err
	}
	var others, failed []buried
	beingDeleted := false
	for _, g := range graves {
		switch {
		case g.record.UID != cur.GetUID():
			others = append(others, g)
		case cur.GetDeletionTimestamp() != nil:
			// Still held by finalizers of others: it goes when they are
			// done, and its tombstone is acted on then.
		default:
			switch didFail, err := r.deletionFailed(ctx, objKey, g, res); {
			case err != nil:
				return false, err
			case didFail:
				failed = append(failed, g)
			default:
				beingDeleted = true
			}
		}
	}
	if len(others) > 0 {
		// What was being let go of the earlier object is forgotten: the
		// copies are the new object's now.
		r.w.Forget(objKey)
		if err := r.dropTombstones(ctx, objKey, others, "it was created again with UID "+string(cur.GetUID())); err != nil {
			return false, err
		}
	}
	return beingDeleted, r.dropTombstones(ctx, objKey, failed, "its deletion did not happen: it is still there")
}

// deletionFailed reports whether the object of a tombstone is still there,
// not being deleted, past tombstoneGrace: its deletion failed after the
// tombstone was written. Before, the object is looked at again then.
func (r *Releaser) deletionFailed(ctx context.Context, objKey string, g buried, res *Result) (bool, error) {
	if age := time.Since(g.record.Deleted); age < tombstoneGrace {
		res.recheck(tombstoneGrace - age)
		return false, nil
	}
	live, err := r.objs.Resource(g.record.Namespace).Get(ctx, g.record.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// Our cache is behind: it brings the deletion.
		res.recheck(StaleRetry)
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s, which has a tombstone: %w", r.objs.What(objKey), err)
	}
	return live.GetUID() == g.record.UID && live.GetDeletionTimestamp() == nil, nil
}

// bury lets go of the copies of a deleted object from its tombstones, the
// oldest first, and deletes each tombstone once every copy is let go.
func (r *Releaser) bury(ctx context.Context, objKey string, graves []buried, res *Result) error {
	for _, g := range graves {
		fed := r.buriedObject(g.record)
		local := r.IsLocal(fed)
		if r.typ.DividesHPA && !local {
			if err := hpatarget.Release(ctx, r.fed, r.typ.Resource, fed); err != nil {
				return err
			}
		}
		// A local object has no copies (but those made before it became
		// local): nothing waits for a cluster that is away.
		done, err := r.release(fed, !local, res)
		if err != nil || !done {
			return err
		}
		if err := r.deleteTombstone(ctx, g); err != nil {
			return err
		}
		klog.FromContext(ctx).V(2).Info("Member copies of a deleted object let go; tombstone deleted",
			"object", objKey, "uid", g.record.UID, "tombstone", g.name)
		// The next tombstone starts afresh (the copies are gone).
		r.w.Forget(objKey)
	}
	return nil
}

// buriedObject is the federated object a tombstone records, as far as
// deleting its copies needs: identity, the annotations and labels that
// decide it, its deletion time (or, when later, our start: a cluster is not
// given up on before we could reach it), a Secret's type, an HPA's target.
func (r *Releaser) buriedObject(rec tombstone.Record) *unstructured.Unstructured {
	fed := &unstructured.Unstructured{Object: map[string]any{}}
	fed.SetAPIVersion(r.typ.Resource.GroupVersion().String())
	fed.SetKind(r.typ.Kind)
	fed.SetNamespace(rec.Namespace)
	fed.SetName(rec.Name)
	fed.SetUID(rec.UID)
	fed.SetAnnotations(rec.Annotations)
	fed.SetLabels(rec.Labels)
	deleted := rec.Deleted
	if r.started.After(deleted) {
		deleted = r.started
	}
	fed.SetDeletionTimestamp(&metav1.Time{Time: deleted})
	if rec.SecretType != "" {
		fed.Object["type"] = rec.SecretType
	}
	if t := rec.ScaleTarget; t != nil {
		fed.Object["spec"] = map[string]any{"scaleTargetRef": map[string]any{"kind": t.Kind, "name": t.Name}}
	}
	return fed
}

// dropTombstones deletes tombstones that have nothing (more) to do, saying why.
func (r *Releaser) dropTombstones(ctx context.Context, objKey string, graves []buried, why string) error {
	for _, g := range graves {
		if err := r.deleteTombstone(ctx, g); err != nil {
			return err
		}
		klog.FromContext(ctx).Info("Tombstone deleted without touching member copies", "object", objKey, "uid", g.record.UID, "tombstone", g.name, "reason", why)
	}
	return nil
}

// deleteTombstone deletes exactly that tombstone.
func (r *Releaser) deleteTombstone(ctx context.Context, g buried) error {
	err := r.fed.Resource(configMaps).Namespace(tombstone.Namespace).Delete(ctx, g.name,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(g.uid)}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting tombstone %s/%s of %s: %w", tombstone.Namespace, g.name, r.objs.What(g.record.ObjectKey()), err)
	}
	return nil
}

// tombstoned reports whether the object of key has a tombstone: its copies
// are being let go, not strays.
func (r *Releaser) tombstoned(objKey string) bool {
	return len(r.tombstonesOf(objKey)) > 0
}
