// Package clusterselector parses the federation.alpha.kubernetes.io/cluster-selector
// annotation, which restricts the member clusters a federated object is
// placed in, and matches it against a Cluster's labels.
package clusterselector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// Annotation is the key of the cluster selector annotation.
const Annotation = federationv1beta1.ClusterSelectorAnnotation

// Requirement is one element of the annotation's JSON array.
type Requirement struct {
	// Key is the Cluster label the requirement looks at.
	Key string `json:"key"`
	// Operator is one of the operators v1 accepted (see operators).
	Operator string `json:"operator"`
	// Values are the operands of the operator.
	Values []string `json:"values,omitempty"`
}

// operators maps every spelling v1 accepted to the label selector operator.
var operators = map[string]selection.Operator{
	"=":            selection.Equals,
	"==":           selection.DoubleEquals,
	"!=":           selection.NotEquals,
	"in":           selection.In,
	"In":           selection.In,
	"notin":        selection.NotIn,
	"NotIn":        selection.NotIn,
	"exists":       selection.Exists,
	"Exists":       selection.Exists,
	"!":            selection.DoesNotExist,
	"DoesNotExist": selection.DoesNotExist,
	"gt":           selection.GreaterThan,
	"Gt":           selection.GreaterThan,
	">":            selection.GreaterThan,
	"lt":           selection.LessThan,
	"Lt":           selection.LessThan,
	"<":            selection.LessThan,
}

// Parse parses the annotation's value, a JSON array of requirements that
// are ANDed, into a label selector. Unknown fields, unknown operators and
// operands that do not fit the operator are errors.
func Parse(value string) (labels.Selector, error) {
	var reqs []Requirement
	dec := json.NewDecoder(bytes.NewReader([]byte(value)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&reqs); err != nil {
		return nil, fmt.Errorf("not a JSON array of {key, operator, values}: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the JSON array")
	}
	selector := labels.NewSelector()
	for i, r := range reqs {
		op, ok := operators[r.Operator]
		if !ok {
			return nil, fmt.Errorf("requirement %d: unknown operator %q", i, r.Operator)
		}
		req, err := labels.NewRequirement(r.Key, op, r.Values)
		if err != nil {
			return nil, fmt.Errorf("requirement %d (%s %s %v): %w", i, r.Key, r.Operator, r.Values, err)
		}
		selector = selector.Add(*req)
	}
	return selector, nil
}

// ForObject returns the selector in an object's annotations; without the
// annotation every cluster matches.
func ForObject(annotations map[string]string) (labels.Selector, error) {
	value, ok := annotations[Annotation]
	if !ok {
		return labels.Everything(), nil
	}
	return Parse(value)
}
