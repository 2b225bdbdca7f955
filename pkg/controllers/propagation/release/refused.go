package release

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// ReasonNotPropagated is the reason of the event, and of the Propagated
// condition, of an object that is never propagated because of its namespace.
const ReasonNotPropagated = "NotPropagated"

// neverPropagatedSet is the set of never-propagated namespaces of the
// options: the default list unless given, always with the federation's own.
func neverPropagatedSet(namespaces []string) sets.Set[string] {
	if namespaces == nil {
		namespaces = federatedtypes.DefaultNeverPropagatedNamespaces
	}
	return federatedtypes.NeverPropagatedNamespaces(namespaces)
}

// NeverPropagated returns the never-propagated namespace that keeps the
// object of key from the members, if any.
func (r *Releaser) NeverPropagated(key string) (string, bool) {
	ns, name := fedobject.SplitKey(key)
	return federatedtypes.NeverPropagatedIn(r.never, r.typ.Resource.GroupResource(), ns, name)
}

// Refuse handles an object of a never-propagated namespace. Nothing of it
// is written to a member, not even the deletion of a copy: what a member
// holds in its system namespaces is its own. A deleted object is let go at
// once. The federation's own namespace says nothing (its objects, the
// members' credentials, are not meant to travel); in the others the object
// gets a Warning event, once, and for types with conditions the engine
// sets Propagated=False (Result.Refused), so that its owner learns why it
// runs nowhere.
func (r *Releaser) Refuse(ctx context.Context, key, namespace string) (Result, error) {
	cached, err := r.objs.Get(fedobject.SplitKey(key))
	if apierrors.IsNotFound(err) {
		r.refused.Delete(key)
		return Result{Gone: true}, nil
	}
	if err != nil {
		return Result{}, err
	}
	fed := cached.DeepCopy()
	if fed.GetDeletionTimestamp() != nil {
		return Result{}, r.letGo(ctx, key, fed)
	}
	if namespace == federationv1beta1.SystemNamespace {
		return Result{}, nil
	}
	message := fmt.Sprintf("namespace %s is never propagated", namespace)
	if told, ok := r.refused.Load(key); !ok || told != fed.GetUID() {
		r.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonNotPropagated, "%s is not propagated to any member cluster: %s", r.objs.What(key), message)
		r.refused.Store(key, fed.GetUID())
	}
	if !r.typ.Conditions {
		return Result{}, nil
	}
	return Result{Refused: message}, nil
}

// letGo removes from a deleted refused object the finalizers it may carry:
// ours (set while its namespace was propagated, or by an apiserver whose
// list differs from ours) and the delete's own (no garbage collector runs
// here). Its member copies, if any, are left as they are.
func (r *Releaser) letGo(ctx context.Context, key string, fed *unstructured.Unstructured) error {
	fins := fed.GetFinalizers()
	kept := slices.DeleteFunc(slices.Clone(fins), func(f string) bool {
		return f == federationv1beta1.FinalizerDeleteFromUnderlyingClusters || f == orphanFinalizer || f == foregroundFinalizer
	})
	if len(kept) == len(fins) {
		return nil
	}
	fed.SetFinalizers(kept)
	if _, err := r.objs.Resource(fed.GetNamespace()).Update(ctx, fed, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing finalizers of %s: %w", r.objs.What(key), err)
	}
	return nil
}
