package writer

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/membercluster"
)

// NamespaceLive reports, from live reads, whether objects of namespace
// belong in a member: the federated namespace is there and selects the
// cluster, and the member's namespace exists, with or without our label,
// and is not terminating.
func (w *Writer) NamespaceLive(ctx context.Context, cluster, namespace string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, w.opts.MemberTimeout)
	defer cancel()
	fedNs, err := w.fed.Resource(membercluster.NamespacesResource).Get(ctx, namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading namespace %s: %w", namespace, err)
	}
	cl := w.usableCluster(cluster)
	if cl == nil || !plan.Selected(fedNs.GetAnnotations(), cl) {
		return false, nil
	}
	client, err := w.members.Client(cluster)
	if err != nil {
		return false, err
	}
	memberNs, err := client.Resource(membercluster.NamespacesResource).Get(ctx, namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading namespace %s in cluster %s: %w", namespace, cluster, err)
	}
	return !terminating(memberNs), nil
}

// terminating reports whether a namespace is being deleted.
func terminating(ns *unstructured.Unstructured) bool {
	phase, _, _ := unstructured.NestedString(ns.Object, "status", "phase")
	return ns.GetDeletionTimestamp() != nil || phase == string(corev1.NamespaceTerminating)
}

// usableCluster returns a Ready cluster by name, nil when it is not one.
func (w *Writer) usableCluster(name string) *federationv1beta1.Cluster {
	for _, cl := range w.members.Clusters() {
		if cl.Name == name {
			return cl
		}
	}
	return nil
}
