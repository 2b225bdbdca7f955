package plan

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/clusterselector"
)

// Placement returns the names of the clusters, among the usable ones, that
// should hold a copy of an object with these annotations: those whose labels
// match the cluster selector and, for a namespaced object, that already
// have its namespace (hasNamespace; nil for cluster-scoped objects).
func Placement(annotations map[string]string, clusters []*federationv1beta1.Cluster, hasNamespace func(cluster string) bool) (map[string]bool, error) {
	selector, err := clusterselector.ForObject(annotations)
	if err != nil {
		return nil, fmt.Errorf("annotation %s: %w", clusterselector.Annotation, err)
	}
	placed := map[string]bool{}
	for _, c := range clusters {
		if !selector.Matches(labels.Set(c.Labels)) {
			continue
		}
		if hasNamespace != nil && !hasNamespace(c.Name) {
			continue
		}
		placed[c.Name] = true
	}
	return placed, nil
}

// Selected reports whether a cluster matches the object's selector,
// whatever its health.
func Selected(annotations map[string]string, c *federationv1beta1.Cluster) bool {
	selector, err := clusterselector.ForObject(annotations)
	return err == nil && selector.Matches(labels.Set(c.Labels))
}
