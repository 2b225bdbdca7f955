package propagation

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
)

// keepUnmarked sends a cluster's copy without the pod marks that cannot
// be added to an object once it exists (a workload's selector, a Job's
// pod template: federatedtypes.PodMarks) when the member's copy was made
// without them (adopted, or written before they were).
func (c *Controller) keepUnmarked(cluster string, fed, desired *unstructured.Unstructured, hash string) (*unstructured.Unstructured, string, error) {
	if !c.typ.Pods.HasFixed(desired) {
		return desired, hash, nil
	}
	cur, ok := c.members.Get(cluster, c.typ.Resource, fed.GetNamespace(), fed.GetName())
	if !ok || !c.typ.Pods.MissesFixed(cur, desired) {
		return desired, hash, nil
	}
	return plan.Unmarked(c.typ, desired)
}
