package release

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer"
	"github.com/federation-v1/federation/pkg/ownership"
	"github.com/federation-v1/federation/pkg/tombstone"
)

// A type whose definition is being deleted (Type.Withdrawn: a CRD at the
// federation) loses its objects without tombstones: the apiextensions
// server deletes them from its storage, past admission. Their copies are
// then let go from what the members hold: every copy of ours whose object
// is gone from the federation, as a deleted object's copies are. The
// definition's own deletion waits for it (Type.Dependents).

// Withdrawn lets go of the copies of the object of key when the type's
// definition is being deleted and the object is gone from the federation,
// and reports whether that is all the reconcile should do.
func (r *Releaser) Withdrawn(objKey string) (bool, Result) {
	var res Result
	if r.typ.Withdrawn == nil {
		return false, res
	}
	ns, name := fedobject.SplitKey(objKey)
	if _, err := r.objs.Get(ns, name); !apierrors.IsNotFound(err) {
		return false, res
	}
	if _, never := r.NeverPropagated(objKey); never {
		return false, res
	}
	somewhere, held := false, false
	var tasks []writer.ClusterTask
	for _, cl := range r.members.Clusters() {
		withdrawn, keep := r.typ.Withdrawn(cl.Name)
		if !withdrawn {
			continue
		}
		somewhere = true
		cur, ok := r.members.Get(cl.Name, r.typ.Resource, ns, name)
		if !ok || !r.ourCopy(cur) {
			continue
		}
		held = true
		// Let go, and our cache has not seen it yet.
		if r.w.Released(objKey, cl.Name) {
			continue
		}
		action := writer.Delete
		if keep {
			action = writer.Orphan
		}
		tasks = append(tasks, writer.ClusterTask{Cluster: cl.Name, Task: writer.Task{Action: action, Fed: r.withdrawnObject(cur)}})
	}
	if !somewhere {
		return false, res
	}
	r.w.DropWrites(objKey)
	if !held {
		r.w.Forget(objKey)
	}
	r.w.Dispatch(objKey, tasks)
	res.Gone = true
	return true, res
}

// ourCopy reports whether a member object is a copy written by us (not a
// member's own, another federation's, nor an object another controls).
func (r *Releaser) ourCopy(obj metav1.Object) bool {
	return ownership.OurCopy(obj, r.members.Federation(), r.members.FederationUID())
}

// withdrawnObject is the gone federated object of a copy, as far as
// letting the copy go needs: its identity, the object's UID the copy
// records (so that a later object's copy is never touched), no annotation
// (adopted copies go back to their members).
func (r *Releaser) withdrawnObject(cp *unstructured.Unstructured) *unstructured.Unstructured {
	return r.buriedObject(tombstone.Record{
		Namespace: cp.GetNamespace(), Name: cp.GetName(),
		UID:     types.UID(cp.GetAnnotations()[federationv1beta1.ObjectUIDAnnotation]),
		Deleted: time.Now(),
	})
}

// WithdrawnLeft names what is left to let go of a withdrawn type's copies,
// "" when nothing: usable clusters whose cache of the type has not synced
// (unless the type may not be read there, or is not served), and the copies of ours
// whose object is gone there (WithdrawnStrays).
func (r *Releaser) WithdrawnLeft() string {
	var left []string
	for _, cl := range r.members.Clusters() {
		if withdrawn, _ := r.typ.Withdrawn(cl.Name); withdrawn && !r.members.Synced(cl.Name, r.typ.Resource) &&
			!r.members.Forbidden(cl.Name, r.typ.Resource) && !r.members.Unserved(cl.Name, r.typ.Resource) {
			left = append(left, fmt.Sprintf("cluster %s: its cache of %s has not synced", cl.Name, r.typ.Resource.Resource))
		}
	}
	for cluster, strays := range r.WithdrawnStrays() {
		for _, s := range strays {
			left = append(left, fmt.Sprintf("%s in cluster %s", fedobject.Key(s.GetNamespace(), s.GetName()), cluster))
		}
	}
	if len(left) == 0 {
		return ""
	}
	slices.Sort(left)
	const shown = 5
	if len(left) > shown {
		left = append(left[:shown], fmt.Sprintf("and %d more", len(left)-shown))
	}
	return strings.Join(left, ", ")
}

// waitForDependents returns how much longer fed's deletion waits for what
// depends on it (Type.Dependents) before its copies are let go; once
// DeletionWait has passed since the deletion it goes on, telling what was
// left in an event.
func (r *Releaser) waitForDependents(fed *unstructured.Unstructured) time.Duration {
	if r.typ.Dependents == nil {
		return 0
	}
	pending := r.typ.Dependents(fed)
	if pending == "" {
		return 0
	}
	if left := time.Until(fed.GetDeletionTimestamp().Add(r.opts.DeletionWait)); left > 0 {
		return min(left, time.Second)
	}
	r.recorder.Eventf(fed, corev1.EventTypeWarning, writer.ReasonDeleteFailed,
		"Gave up waiting after %s for what depends on %s: %s", r.opts.DeletionWait,
		r.objs.What(fedobject.Key(fed.GetNamespace(), fed.GetName())), pending)
	return 0
}

// WithdrawnStrays are the strays (Strays) in the clusters where the type
// is withdrawn: the copies its definition's deletion lets go there, with
// those that were strays before.
func (r *Releaser) WithdrawnStrays() map[string][]metav1.Object {
	return r.straysIn(func(cluster string) bool {
		withdrawn, _ := r.typ.Withdrawn(cluster)
		return withdrawn
	})
}
