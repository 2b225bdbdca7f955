package propagation

import (
	"context"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// The member EndpointSlices of a federated Service carry the federation's
// label too: the EndpointSlice controller copies a Service's labels to its
// slices. So they are watched in the members' label-filtered caches, and an
// endpoint that becomes ready or unready re-syncs its Service at once.
var endpointSlices = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")

// serviceNameLabel on an EndpointSlice names its Service.
const serviceNameLabel = "kubernetes.io/service-name"

// readyEndpoints reports whether a member's Service has a ready endpoint,
// from the member's cache of EndpointSlices. Only asked for Services with a
// load-balancer address.
func (c *Controller) readyEndpoints(_ context.Context, m federatedtypes.Member) bool {
	if len(federatedtypes.LoadBalancerIngress(m.Object)) == 0 {
		return false
	}
	selector := labels.SelectorFromSet(labels.Set{serviceNameLabel: m.Object.GetName()})
	for _, slice := range c.members.List(m.Cluster, endpointSlices, m.Object.GetNamespace(), selector) {
		if sliceReady(slice) {
			return true
		}
	}
	return false
}

// sliceReady: an endpoint is ready unless its ready condition says false.
func sliceReady(slice *unstructured.Unstructured) bool {
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
