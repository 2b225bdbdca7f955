package sync

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
