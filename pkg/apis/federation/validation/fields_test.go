package validation

import "k8s.io/apimachinery/pkg/util/validation/field"

// fieldsOf returns the paths of the fields errs name.
func fieldsOf(errs field.ErrorList) []string {
	var fields []string
	for _, err := range errs {
		fields = append(fields, err.Field)
	}
	return fields
}
