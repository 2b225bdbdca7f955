package propagation

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// local reports whether a federated object stays at the federation: the
// local label, or a Secret of one of the local types (Helm's releases).
func (c *Controller) local(fed *unstructured.Unstructured) bool {
	types := c.opts.LocalSecretTypes
	if types == nil {
		types = federatedtypes.DefaultLocalSecretTypes
	}
	return federatedtypes.LocalWith(fed, types)
}

// keepLocal handles an object that stays at the federation
// (federatedtypes.Local): it has no copies, and its status is not ours to
// write. Copies made before it became local are removed as from clusters
// that no longer select it, after the same live reads (unplace.go).
func (c *Controller) keepLocal(key string, fed *unstructured.Unstructured) {
	var tasks []writer.ClusterTask
	for _, cl := range c.members.Clusters() {
		if plan.Shared(c.typ, fed) {
			return
		}
		if _, exists := c.members.Get(cl.Name, c.typ.Resource, fed.GetNamespace(), fed.GetName()); exists {
			tasks = append(tasks, writer.ClusterTask{Cluster: cl.Name, Task: writer.Task{Action: writer.Unplace, Fed: fed}})
		}
	}
	c.w.Dispatch(key, tasks)
}

// membersOwn reports whether key names an object every member has of its
// own (federatedtypes.MembersOwn: the Service default/kubernetes).
func (c *Controller) membersOwn(key string) bool {
	ns, name := splitKey(key)
	return federatedtypes.MembersOwn(c.typ.Resource.GroupResource(), ns, name)
}

// leaveToMembers handles the federation's object of a name every member has
// of its own: nothing is written to a member, not even the deletion of a
// copy an older federation made (it may have been applied over the member's
// own), and no event is told (the federation's default/kubernetes is
// expected). A deleted one is let go at once, and its tombstones go without
// touching the members.
func (c *Controller) leaveToMembers(ctx context.Context, key string) error {
	if graves := c.tombstonesOf(key); len(graves) > 0 {
		if err := c.dropTombstones(ctx, key, graves, "every member has its own"); err != nil {
			return err
		}
	}
	cached, err := c.get(splitKey(key))
	if apierrors.IsNotFound(err) {
		c.changes.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	if cached.GetDeletionTimestamp() != nil {
		return c.letGo(ctx, key, cached.DeepCopy())
	}
	return nil
}
