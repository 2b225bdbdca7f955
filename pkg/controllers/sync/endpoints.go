package sync

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// readyEndpoints reports whether a member's Service has a ready endpoint,
// reading its EndpointSlices (not cached: they are not labelled by us).
// Only asked for Services with a load-balancer address.
func (c *Controller) readyEndpoints(ctx context.Context, m Member) bool {
	if len(loadBalancerIngress(m.Object)) == 0 {
		return false
	}
	client, err := c.members.Client(m.Cluster)
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.MemberTimeout)
	defer cancel()
	list, err := client.Resource(gvr("discovery.k8s.io", "v1", "endpointslices")).Namespace(m.Object.GetNamespace()).
		List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + m.Object.GetName()})
	if err != nil {
		return false
	}
	for _, slice := range list.Items {
		if sliceReady(slice) {
			return true
		}
	}
	return false
}

// sliceReady: an endpoint is ready unless its ready condition says false.
func sliceReady(slice unstructured.Unstructured) bool {
	endpoints, _, _ := unstructured.NestedSlice(slice.Object, "endpoints")
	for _, e := range endpoints {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		ready, found, _ := unstructured.NestedBool(m, "conditions", "ready")
		if !found || ready {
			return true
		}
	}
	return false
}
