package writer

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func entry(manager string, op metav1.ManagedFieldsOperationType, apiVersion, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: apiVersion,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

// The create's fields are handed over only when our applies leave one of
// them out, or when that cannot be told.
func TestTheCreatesFieldsAreHandedOverOnlyWhenAnApplyLeavesOneOut(t *testing.T) {
	const (
		ab = `{"f:data":{"f:a":{},"f:b":{}}}`
		a  = `{"f:data":{"f:a":{}}}`
	)
	update, apply := metav1.ManagedFieldsOperationUpdate, metav1.ManagedFieldsOperationApply
	for _, c := range []struct {
		name    string
		managed []metav1.ManagedFieldsEntry
		want    bool
	}{
		{"not created by us (adopted, or handed over already)", []metav1.ManagedFieldsEntry{entry(FieldManager, apply, "v1", a)}, false},
		{"the apply sets every field the create set", []metav1.ManagedFieldsEntry{entry(FieldManager, update, "v1", a), entry(FieldManager, apply, "v1", ab)}, false},
		// As a member records them: the create also owns the maps it filled.
		{"the apply sets every field of the maps the create filled", []metav1.ManagedFieldsEntry{
			entry(FieldManager, update, "v1", `{"f:data":{".":{},"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{".":{},"f:l":{}}}}`),
			entry(FieldManager, apply, "v1", `{"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:l":{}}}}`)}, false},
		{"the apply left a filled map's field out", []metav1.ManagedFieldsEntry{
			entry(FieldManager, update, "v1", `{"f:data":{".":{},"f:a":{},"f:b":{}}}`),
			entry(FieldManager, apply, "v1", `{"f:data":{"f:a":{}}}`)}, true},
		{"the create set an empty map the apply leaves out", []metav1.ManagedFieldsEntry{
			entry(FieldManager, update, "v1", `{"f:data":{}}`),
			entry(FieldManager, apply, "v1", `{"f:metadata":{"f:labels":{"f:l":{}}}}`)}, true},
		{"the apply left out a field the create set", []metav1.ManagedFieldsEntry{entry(FieldManager, update, "v1", ab), entry(FieldManager, apply, "v1", a)}, true},
		{"no apply yet", []metav1.ManagedFieldsEntry{entry(FieldManager, update, "v1", a)}, true},
		{"the entries are of different versions", []metav1.ManagedFieldsEntry{entry(FieldManager, update, "v1beta1", a), entry(FieldManager, apply, "v1", ab)}, true},
		{"the create's fields cannot be read", []metav1.ManagedFieldsEntry{entry(FieldManager, update, "v1", `not json`), entry(FieldManager, apply, "v1", ab)}, true},
		{"another manager's Update entry", []metav1.ManagedFieldsEntry{entry("kubectl", update, "v1", ab), entry(FieldManager, apply, "v1", a)}, false},
		{"our Update entry of the status subresource", []metav1.ManagedFieldsEntry{
			func() metav1.ManagedFieldsEntry {
				e := entry(FieldManager, update, "v1", `{"f:status":{}}`)
				e.Subresource = "status"
				return e
			}(), entry(FieldManager, apply, "v1", a)}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ManagedFields: c.managed}}
			assert.Equal(t, c.want, handOverNeeded(obj))
		})
	}
}
