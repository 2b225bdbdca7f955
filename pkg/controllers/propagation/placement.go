package propagation

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

// namespaceIn reports whether a namespaced object's namespace is in a
// member for placement. Our label-filtered cache only holds the member
// namespaces that carry our label: one found there is in; one missing from
// it may only have lost its label (or not be in the cache yet), so it is
// looked up (namespaceLive). We read it live rather than keep a second,
// unfiltered watch of every member namespace: a miss is rare once a
// namespace is propagated (the namespaces controller labels it again), one
// read answers it, and the members' caches keep growing only with what
// the federation made. A failed read is no proof of absence: the namespace
// counts as in, and a removal is confirmed live anyway (unplace.go).
func (c *Controller) namespaceIn(ctx context.Context, cluster, namespace string) bool {
	if _, ok := c.members.Get(cluster, membercluster.NamespacesResource, "", namespace); ok {
		return true
	}
	in, err := c.namespaceLive(ctx, cluster, namespace)
	return in || err != nil
}

// namespaceLive reports, from live reads, whether objects of namespace
// belong in a member: the federated namespace is there and selects the
// cluster, and the member's namespace exists, with or without our label,
// and is not terminating.
func (c *Controller) namespaceLive(ctx context.Context, cluster, namespace string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.MemberTimeout)
	defer cancel()
	fedNs, err := c.fedClient.Resource(membercluster.NamespacesResource).Get(ctx, namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading namespace %s: %w", namespace, err)
	}
	cl := c.usableCluster(cluster)
	if cl == nil || !plan.Selected(fedNs.GetAnnotations(), cl) {
		return false, nil
	}
	client, err := c.members.Client(cluster)
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
func (c *Controller) usableCluster(name string) *federationv1beta1.Cluster {
	for _, cl := range c.members.Clusters() {
		if cl.Name == name {
			return cl
		}
	}
	return nil
}
