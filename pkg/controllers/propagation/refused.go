package propagation

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
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

// neverPropagated returns the never-propagated namespace that keeps the
// object of key from the members, if any.
func (c *Controller) neverPropagated(key string) (string, bool) {
	ns, name := splitKey(key)
	return federatedtypes.NeverPropagatedIn(c.never, c.typ.Resource.GroupResource(), ns, name)
}

// refuse handles an object of a never-propagated namespace. Nothing of it
// is written to a member, not even the deletion of a copy: what a member
// holds in its system namespaces is its own. A deleted object is let go at
// once. The federation's own namespace says nothing (its objects, the
// members' credentials, are not meant to travel); in the others the object
// gets a Warning event, once, and for types with conditions
// Propagated=False, so that its owner learns why it runs nowhere.
func (c *Controller) refuse(ctx context.Context, key, namespace string) error {
	cached, err := c.get(splitKey(key))
	if apierrors.IsNotFound(err) {
		c.refused.Delete(key)
		c.changes.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	fed := cached.DeepCopy()
	if fed.GetDeletionTimestamp() != nil {
		return c.letGo(ctx, key, fed)
	}
	if namespace == federationv1beta1.SystemNamespace {
		return nil
	}
	message := fmt.Sprintf("namespace %s is never propagated", namespace)
	if told, ok := c.refused.Load(key); !ok || told != fed.GetUID() {
		c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonNotPropagated, "%s is not propagated to any member cluster: %s", c.what(key), message)
		c.refused.Store(key, fed.GetUID())
	}
	if !c.typ.Conditions {
		return nil
	}
	return c.writeRefused(ctx, key, fed, message)
}

// letGo removes from a deleted refused object the finalizers it may carry:
// ours (set while its namespace was propagated, or by an apiserver whose
// list differs from ours) and the delete's own (no garbage collector runs
// here). Its member copies, if any, are left as they are.
func (c *Controller) letGo(ctx context.Context, key string, fed *unstructured.Unstructured) error {
	fins := fed.GetFinalizers()
	kept := slices.DeleteFunc(slices.Clone(fins), func(f string) bool {
		return f == Finalizer || f == orphanFinalizer || f == foregroundFinalizer
	})
	if len(kept) == len(fins) {
		return nil
	}
	fed.SetFinalizers(kept)
	if _, err := c.resource(fed.GetNamespace()).Update(ctx, fed, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing finalizers of %s: %w", c.what(key), err)
	}
	return nil
}

// writeRefused sets the Propagated condition of a refused object to False
// with ReasonNotPropagated, in place of the one it had, leaving the rest of
// its status; nothing is written when it is already so.
func (c *Controller) writeRefused(ctx context.Context, key string, fed *unstructured.Unstructured, message string) error {
	current, _, _ := unstructured.NestedMap(fed.Object, "status")
	want := condition{Type: PropagatedCondition, Status: "False", Reason: ReasonNotPropagated, Message: message}.keep(current, time.Now())
	conditions, _ := current["conditions"].([]any)
	conditions = slices.Clone(conditions)
	i := slices.IndexFunc(conditions, func(e any) bool {
		m, ok := e.(map[string]any)
		return ok && m["type"] == PropagatedCondition
	})
	if i >= 0 {
		conditions[i] = want
	} else {
		conditions = append(conditions, want)
	}
	status := maps.Clone(current)
	if status == nil {
		status = map[string]any{}
	}
	status["conditions"] = conditions
	if sameJSON(current, status) {
		return nil
	}
	fed.Object["status"] = status
	if _, err := c.resource(fed.GetNamespace()).UpdateStatus(ctx, fed, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("writing status of %s: %w", c.what(key), err)
	}
	return nil
}
