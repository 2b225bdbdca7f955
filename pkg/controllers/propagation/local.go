package propagation

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/controllers/propagation/memberwrites"
)

// keepLocal handles an object that stays at the federation
// (federatedtypes.Local): it has no copies, and its status is not ours to
// write. Copies made before it became local are removed as from clusters
// that no longer select it, after the same live reads (unplace.go).
func (c *Controller) keepLocal(key string, fed *unstructured.Unstructured) {
	var tasks []memberwrites.ClusterTask
	for _, cl := range c.members.Clusters() {
		if c.shared(fed) {
			return
		}
		if _, exists := c.members.Get(cl.Name, c.typ.Resource, fed.GetNamespace(), fed.GetName()); exists {
			tasks = append(tasks, memberwrites.ClusterTask{Cluster: cl.Name, Task: memberwrites.Task{Action: memberwrites.Unplace, Fed: fed}})
		}
	}
	c.writes.Dispatch(key, tasks)
}
