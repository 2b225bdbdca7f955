package kubefed

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"

	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/tombstone"
)

// pendingDeletions lists the objects whose deletion's tombstone the
// controller manager has not yet acted on, as "resource.group|ns/name".
func pendingDeletions(ctx context.Context, kube kubernetes.Interface) (sets.Set[string], error) {
	list, err := kube.CoreV1().ConfigMaps(tombstone.Namespace).List(ctx, metav1.ListOptions{LabelSelector: tombstone.Label})
	if err != nil {
		return nil, fmt.Errorf("listing the tombstones of deletions in %s: %w", tombstone.Namespace, err)
	}
	out := sets.New[string]()
	for _, cm := range list.Items {
		if r, err := tombstone.Parse(cm.Data); err == nil {
			out.Insert(tombstone.LabelValue(r.Resource) + "|" + r.ObjectKey())
		}
	}
	return out, nil
}

// beingDeleted reports whether a copy's federated object was deleted and
// the controller manager is to delete the copy from its tombstone.
func (f *strayFinder) beingDeleted(t *federatedtypes.Type, obj *unstructured.Unstructured) bool {
	return f.deleting.Has(tombstone.LabelValue(t.Resource.GroupResource()) + "|" + strayKey(obj))
}
