package propagation

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// needsSync reports whether an update of a federated object can change what
// its members should hold. The controller's own bookkeeping cannot: a
// finalizer added, the status it wrote, and the resourceVersion and managed
// fields that come with them. Skipping those spares a second reconcile of
// every new object, which would find its member copies written but not yet
// in the member caches and read each back from its member.
func needsSync(old, cur any) bool {
	o, ok1 := old.(*unstructured.Unstructured)
	c, ok2 := cur.(*unstructured.Unstructured)
	if !ok1 || !ok2 || o.GetDeletionTimestamp() != nil || c.GetDeletionTimestamp() != nil {
		return true
	}
	// A finalizer taken away is someone else's doing: look again.
	for _, f := range o.GetFinalizers() {
		if !slices.Contains(c.GetFinalizers(), f) {
			return true
		}
	}
	return !equality.Semantic.DeepEqual(withoutBookkeeping(o), withoutBookkeeping(c))
}

// withoutBookkeeping copies obj without what needsSync ignores.
func withoutBookkeeping(obj *unstructured.Unstructured) map[string]any {
	out := obj.DeepCopy()
	out.SetResourceVersion("")
	out.SetManagedFields(nil)
	out.SetFinalizers(nil)
	delete(out.Object, "status")
	return out.Object
}

// statusTampered reports a federated object whose status someone else
// changed away from what the federation writes (federatedtypes.Type's
// StatusTampered): needsSync ignores status changes, the federation's own
// among them.
func statusTampered(t *federatedtypes.Type, obj any) bool {
	u, ok := obj.(*unstructured.Unstructured)
	return ok && t.StatusTampered != nil && u.GetDeletionTimestamp() == nil && t.StatusTampered(u)
}
