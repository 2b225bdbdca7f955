package propagation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/federation-v1/federation/pkg/controllers/propagation/release"
	"github.com/federation-v1/federation/pkg/tombstone"
)

// A deleted federated object's tombstone (package tombstone) brings its key
// back to the controller of its type, whose release stage lets its copies
// go (package release).

// TombstoneSelector selects the tombstones, for the informer that watches
// them in tombstone.Namespace.
func TombstoneSelector(o *metav1.ListOptions) {
	o.LabelSelector = tombstone.Label
}

// WatchTombstones has the controller act on the tombstones of its type, from
// the shared informer of tombstone.Namespace's ConfigMaps selected by
// TombstoneSelector. Its handler stays on the informer while Run runs:
// controllers of custom resources come and go with their CRDs.
func (c *Controller) WatchTombstones(informer coreinformers.ConfigMapInformer) error {
	inf := informer.Informer()
	if _, ok := inf.GetIndexer().GetIndexers()[release.TombstoneIndex]; !ok {
		if err := inf.AddIndexers(cache.Indexers{release.TombstoneIndex: release.IndexTombstone}); err != nil {
			return fmt.Errorf("indexing tombstones: %w", err)
		}
	}
	c.r.UseTombstones(inf.GetIndexer())
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.tombstoneChanged,
		UpdateFunc: func(_, obj any) { c.tombstoneChanged(obj) },
		DeleteFunc: c.tombstoneChanged,
	})
	if err != nil {
		return err
	}
	c.tombstonesSynced = reg.HasSynced
	c.unwatchTombstones = func() { _ = inf.RemoveEventHandler(reg) }
	return nil
}

// tombstoneChanged enqueues the object of a tombstone of our type.
func (c *Controller) tombstoneChanged(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok || cm.Labels[tombstone.Label] != tombstone.LabelValue(c.typ.Resource.GroupResource()) {
		return
	}
	r, err := tombstone.Parse(cm.Data)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("tombstone %s/%s of a %s: %w; it is ignored", cm.Namespace, cm.Name, c.typ.Kind, err))
		return
	}
	c.queue.Add(r.ObjectKey())
}
