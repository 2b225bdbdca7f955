package sync

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// adopted tells, from what a member answered to our first apply of an
// object, whether the object was already there: then another field manager
// than ours holds some of its fields. A first write is applied without
// reading the member first, so that a new object costs one call per member.
func adopted(applied *unstructured.Unstructured) bool {
	// Read in place: converting every entry (GetManagedFields) for a
	// name showed in the profile of a burst.
	entries, _, _ := unstructured.NestedFieldNoCopy(applied.Object, "metadata", "managedFields")
	list, _ := entries.([]any)
	for _, e := range list {
		if entry, ok := e.(map[string]any); ok && entry["manager"] != FieldManager {
			return true
		}
	}
	return false
}
