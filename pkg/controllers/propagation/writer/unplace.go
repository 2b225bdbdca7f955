package writer

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/clusterselector"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
)

// unplaceRecheck is how soon an object whose unplace was prevented is
// reconciled again: by then our caches have usually caught up (the
// namespaces controller has labelled the member namespace again, or the
// federated object's change has come), and the reconcile writes what the
// object should have.
const unplaceRecheck = time.Second

// unplacePrevented counts the copies our caches said to remove that a live
// read kept.
var unplacePrevented = func() *metrics.CounterVec {
	c := metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "federation", Subsystem: "sync", Name: "unplace_prevented_total",
		Help:           "Member copies our caches said were no longer selected that a live read showed were, so were not deleted, by cluster and federated type.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"cluster", "type"})
	legacyregistry.MustRegister(c)
	return c
}()

// confirmUnplace reports whether the copy of fed in cluster may be deleted
// because the cluster is no longer selected for it. The reconcile decided
// so from caches, which can be behind or, for member namespaces, hold only
// those carrying our label: a copy is deleted only when live reads agree.
// When they do not, the removal is dropped, counted, and the object looked
// at again.
func (w *Writer) confirmUnplace(ctx context.Context, cluster string, fed *unstructured.Unstructured) (bool, error) {
	unselected, kept, err := w.unselected(ctx, cluster, fed)
	if err != nil || unselected {
		return unselected, err
	}
	objKey := fedobject.Key(fed.GetNamespace(), fed.GetName())
	unplacePrevented.WithLabelValues(cluster, w.typ.Name).Inc()
	klog.FromContext(ctx).V(2).Info("Kept a copy our caches said was no longer selected",
		"cluster", cluster, "object", w.objs.What(objKey), "because", kept)
	w.outcomes.add(Outcome{ObjKey: objKey, RecheckAfter: unplaceRecheck})
	return false, nil
}

// unselected tells from live reads whether cluster is no longer selected
// for fed; when it still is, kept says why.
func (w *Writer) unselected(ctx context.Context, cluster string, fed *unstructured.Unstructured) (unselected bool, kept string, err error) {
	readCtx, cancel := context.WithTimeout(ctx, w.opts.MemberTimeout)
	defer cancel()
	live, err := w.objs.Resource(fed.GetNamespace()).Get(readCtx, fed.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) || err == nil && live.GetDeletionTimestamp() != nil:
		// Its deletion decides what becomes of the copy (orphan or not).
		return false, "the federated object is being deleted", nil
	case err != nil:
		return false, "", fmt.Errorf("reading %s: %w", w.objs.What(fedobject.Key(fed.GetNamespace(), fed.GetName())), err)
	}
	if w.local(live) {
		return true, "", nil
	}
	cl := w.usableCluster(cluster)
	if cl == nil {
		return false, "the cluster is not Ready", nil
	}
	selector, err := clusterselector.ForObject(live.GetAnnotations())
	if err != nil {
		// The reconcile tells of it; nothing is removed meanwhile.
		return false, "its cluster selector is invalid", nil
	}
	if !selector.Matches(labels.Set(cl.Labels)) {
		return true, "", nil
	}
	if !w.typ.Namespaced {
		return false, "the cluster selector still selects the cluster", nil
	}
	in, err := w.NamespaceLive(ctx, cluster, fed.GetNamespace())
	if err != nil || !in {
		return !in && err == nil, "", err
	}
	return false, "its namespace is in the cluster", nil
}
