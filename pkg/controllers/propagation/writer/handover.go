package writer

import (
	"bytes"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// handOverNeeded reports whether a copy we created still has fields under
// our create's Update entry that our applies do not set. Our applies
// never remove those, so they are then handed over to our Apply entry (a
// patch, and an apply more; see upgrade). While our applies set every
// field the create set, both entries share them and nothing is left
// behind: the hand-over waits for the apply that leaves one out, whose
// answer says so. A copy's first update is then one write, not three (the
// member-count benchmark found every copy of a member that came back
// written three times, through its member client's rate limit).
func handOverNeeded(obj writtenCopy) bool {
	var created, applied *metav1.ManagedFieldsEntry
	managed := obj.GetManagedFields()
	for i := range managed {
		e := &managed[i]
		if e.Manager != FieldManager || e.Subresource != "" {
			continue
		}
		switch e.Operation {
		case metav1.ManagedFieldsOperationUpdate:
			created = e
		case metav1.ManagedFieldsOperationApply:
			applied = e
		}
	}
	if created == nil {
		return false
	}
	if applied == nil || applied.APIVersion != created.APIVersion {
		return true
	}
	createdSet, ok := fieldSet(created)
	if !ok {
		return true
	}
	appliedSet, ok := fieldSet(applied)
	if !ok {
		return true
	}
	// Leaves only: a create also owns each map it filled ("." in the
	// fields), which an apply does not record; the map stays while any of
	// its fields does.
	return !createdSet.Leaves().Difference(appliedSet).Empty()
}

// fieldSet reads the fields of a managedFields entry.
func fieldSet(e *metav1.ManagedFieldsEntry) (*fieldpath.Set, bool) {
	if e.FieldsType != "FieldsV1" || e.FieldsV1 == nil {
		return nil, false
	}
	s := &fieldpath.Set{}
	if err := s.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
		return nil, false
	}
	return s, true
}
