package propagation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

func endpointSlice(service string, ready ...bool) *unstructured.Unstructured {
	var endpoints []any
	for _, r := range ready {
		endpoints = append(endpoints, map[string]any{"addresses": []any{"10.0.0.1"}, "conditions": map[string]any{"ready": r}})
	}
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "endpoints": endpoints}}
	o.SetNamespace("ns")
	o.SetName(service + "-abcde")
	o.SetLabels(map[string]string{serviceNameLabel: service})
	return o
}

func TestAnEndpointSliceChangeEnqueuesItsService(t *testing.T) {
	tc := newTestController(t, federatedtypes.ByName("services"), testmembers.New([]string{"c1"}))
	tc.MemberChanged("c1", endpointSlices, endpointSlice("web", true))
	require.Equal(t, 1, tc.queue.Len())
	key, _ := tc.queue.Get()
	assert.Equal(t, "ns/web", key)

	other := newTestController(t, federatedtypes.ByName("configmaps"), testmembers.New([]string{"c1"}))
	other.MemberChanged("c1", endpointSlices, endpointSlice("web", true))
	assert.Zero(t, other.queue.Len(), "only Services care about endpoints")
}

func TestReadyEndpointsComeFromTheMembersSlices(t *testing.T) {
	members := testmembers.New([]string{"c1", "c2", "c3"})
	members.Slices = map[string][]*unstructured.Unstructured{
		"c1": {endpointSlice("web", false), endpointSlice("web", false, true)},
		"c2": {endpointSlice("web", false), endpointSlice("other", true)},
	}
	tc := newTestController(t, federatedtypes.ByName("services"), members)
	svc := func(cluster string) federatedtypes.Member {
		m := withHash(cluster, 0, nil, ingress("127.1.1.1"))
		m.Object.SetName("web")
		return m
	}
	assert.True(t, tc.readyEndpoints(t.Context(), svc("c1")), "one ready endpoint is enough")
	assert.False(t, tc.readyEndpoints(t.Context(), svc("c2")), "another Service's slice does not count")
	assert.False(t, tc.readyEndpoints(t.Context(), svc("c3")), "no slice")
	noLB := withHash("c1", 0, nil, map[string]any{})
	noLB.Object.SetName("web")
	assert.False(t, tc.readyEndpoints(t.Context(), noLB), "no load balancer, no endpoints asked")
}

// ingress is a Service status with these load-balancer addresses.
func ingress(ips ...string) map[string]any {
	var in []any
	for _, ip := range ips {
		in = append(in, map[string]any{"ip": ip})
	}
	return map[string]any{"loadBalancer": map[string]any{"ingress": in}}
}
