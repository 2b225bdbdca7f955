package release

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// KeepLocal handles an object that stays at the federation
// (federatedtypes.Local): it has no copies, and its status is not ours to
// write. Copies made before it became local are removed as from clusters
// that no longer select it, after the same live reads (unplace.go).
func (r *Releaser) KeepLocal(key string, fed *unstructured.Unstructured) {
	var tasks []writer.ClusterTask
	for _, cl := range r.members.Clusters() {
		if plan.Shared(r.typ, fed) {
			return
		}
		if _, exists := r.members.Get(cl.Name, r.typ.Resource, fed.GetNamespace(), fed.GetName()); exists {
			tasks = append(tasks, writer.ClusterTask{Cluster: cl.Name, Task: writer.Task{Action: writer.Unplace, Fed: fed}})
		}
	}
	r.w.Dispatch(key, tasks)
}

// MembersOwn reports whether key names an object every member has of its
// own (federatedtypes.MembersOwn: the Service default/kubernetes).
func (r *Releaser) MembersOwn(key string) bool {
	ns, name := fedobject.SplitKey(key)
	return federatedtypes.MembersOwn(r.typ.Resource.GroupResource(), ns, name)
}

// LeaveToMembers handles the federation's object of a name every member
// has of its own: nothing is written to a member, not even the deletion of
// a copy an older federation made (it may have been applied over the
// member's own), and no event is told (the federation's default/kubernetes
// is expected). A deleted one is let go at once, and its tombstones go
// without touching the members.
func (r *Releaser) LeaveToMembers(ctx context.Context, key string) (Result, error) {
	if graves := r.tombstonesOf(key); len(graves) > 0 {
		if err := r.dropTombstones(ctx, key, graves, "every member has its own"); err != nil {
			return Result{}, err
		}
	}
	cached, err := r.objs.Get(fedobject.SplitKey(key))
	if apierrors.IsNotFound(err) {
		return Result{Gone: true}, nil
	}
	if err != nil {
		return Result{}, err
	}
	if cached.GetDeletionTimestamp() != nil {
		return Result{}, r.letGo(ctx, key, cached.DeepCopy())
	}
	return Result{}, nil
}
