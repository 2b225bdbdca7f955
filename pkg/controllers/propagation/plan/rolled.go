package plan

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// Rolled reports whether every placed cluster holds the object as last
// applied (its hash in hashes) and its controllers observed that generation.
func Rolled(placed map[string]bool, members []federatedtypes.Member, hashes map[string]string) bool {
	current := 0
	for _, m := range members {
		if !placed[m.Cluster] || m.Object.GetAnnotations()[federationv1beta1.AppliedHashAnnotation] != hashes[m.Cluster] {
			continue
		}
		observed, _, _ := unstructured.NestedInt64(m.Object.Object, "status", "observedGeneration")
		if observed >= m.Object.GetGeneration() {
			current++
		}
	}
	return current == len(placed)
}
