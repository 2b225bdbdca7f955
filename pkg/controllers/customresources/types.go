package customresources

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// AggregationAnnotation on a CRD opts its custom resources into status
// fields aggregated over the members, as a JSON map of a status field
// (dotted path below status) to "sum", "min" or "max":
// {"readyReplicas":"sum","replicas":"sum"}.
const AggregationAnnotation = "federation.kubernetes.io/status-aggregation"

// notTravelling are the top-level fields of a custom resource that are not
// sent to members: the metadata is the propagation's to write, the status
// the member's.
var notTravelling = []string{"apiVersion", "kind", "metadata", "status"}

// Established reports whether the CRD serves its custom resources.
func Established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// Type builds the federated type of a CRD's custom resources, at its
// storage version (the one every member that holds the CRD serves too).
// Its name in --controllers is the CRD's, <plural>.<group>. What travels is
// every top-level field of the version's schema but metadata and status;
// nothing is pruned. With a status subresource, the members' status comes
// back (status.go). Only the status annotation, the members' own news, is
// pruned.
func Type(crd *apiextensionsv1.CustomResourceDefinition) (*federatedtypes.Type, error) {
	var version *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if v := &crd.Spec.Versions[i]; v.Storage && v.Served {
			version = v
		}
	}
	if version == nil {
		return nil, fmt.Errorf("CustomResourceDefinition %s: its storage version is not served", crd.Name)
	}
	rules, err := aggregationRules(crd.Annotations[AggregationAnnotation])
	if err != nil {
		return nil, fmt.Errorf("CustomResourceDefinition %s: annotation %s: %w", crd.Name, AggregationAnnotation, err)
	}
	t := &federatedtypes.Type{
		Name:       crd.Name,
		Resource:   schema.GroupVersionResource{Group: crd.Spec.Group, Version: version.Name, Resource: crd.Spec.Names.Plural},
		Kind:       crd.Spec.Names.Kind,
		Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		Fields:     fields(version),
		// Deleted at once, from a tombstone, as the built-in types; those
		// made when our finalizer held their deletion have it taken off.
		DropsFinalizer: true,
		Prune:          pruneClusterStatus,
	}
	if version.Subresources != nil && version.Subresources.Status != nil {
		t.Status = statusOf(rules)
		t.Conditions = true
	} else {
		t.Status = annotationOnly
	}
	return t, nil
}

// fields are the top-level properties of a version's schema that travel.
func fields(v *apiextensionsv1.CustomResourceDefinitionVersion) []string {
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return nil
	}
	var out []string
	for name := range v.Schema.OpenAPIV3Schema.Properties {
		if !slices.Contains(notTravelling, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// aggregations are how status fields are aggregated.
var aggregations = []string{"sum", "min", "max"}

// rule aggregates one status field, at path below status.
type rule struct {
	path []string
	op   string
}

// aggregationRules parses AggregationAnnotation; empty means none.
func aggregationRules(value string) ([]rule, error) {
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(value), &m); err != nil {
		return nil, fmt.Errorf(`want a JSON map of status field to "sum", "min" or "max": %w`, err)
	}
	var rules []rule
	for field, op := range m {
		if !slices.Contains(aggregations, op) {
			return nil, fmt.Errorf("field %q: %q is not one of %v", field, op, aggregations)
		}
		path := strings.Split(field, ".")
		if slices.Contains(path, "") || path[0] == "conditions" {
			return nil, fmt.Errorf("field %q: want a dotted path below status, not conditions", field)
		}
		rules = append(rules, rule{path: path, op: op})
	}
	slices.SortFunc(rules, func(a, b rule) int { return strings.Compare(strings.Join(a.path, "."), strings.Join(b.path, ".")) })
	return rules, nil
}

// pruneClusterStatus keeps ClusterStatusAnnotation at the federation: sent
// on, each change of a member's status would rewrite every member's copy.
func pruneClusterStatus(obj *unstructured.Unstructured) {
	annotations := obj.GetAnnotations()
	if _, ok := annotations[ClusterStatusAnnotation]; ok {
		delete(annotations, ClusterStatusAnnotation)
		obj.SetAnnotations(annotations)
	}
}
