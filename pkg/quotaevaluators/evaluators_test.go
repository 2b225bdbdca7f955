package quotaevaluators

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/tools/cache"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/utils/ptr"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// TestEvaluatorsCountExactlyWhatTheStatusLeavesToThem: the names the
// evaluators match are federatedtypes.QuotaCounted, which the status
// aggregation leaves alone, and no other (compute resources, storage
// requests, Pods stay the members' sum).
func TestEvaluatorsCountExactlyWhatTheStatusLeavesToThem(t *testing.T) {
	candidates := federatedtypes.QuotaCountedNames().Insert("pods", "count/pods", "requests.cpu", "limits.memory", "requests.storage",
		"gold.storageclass.storage.k8s.io/requests.storage", "replicationcontrollers", "count/widgets.example.com", "count/namespaces")
	var all []corev1.ResourceName
	for _, n := range sets.List(candidates) {
		all = append(all, corev1.ResourceName(n))
	}
	matched := sets.New[string]()
	for _, e := range Evaluators(nil) {
		for _, n := range e.MatchingResources(all) {
			assert.False(t, matched.Has(string(n)), "%s is counted twice", n)
			matched.Insert(string(n))
		}
	}
	assert.Equal(t, sets.List(federatedtypes.QuotaCountedNames()), sets.List(matched))
	assert.Equal(t, generic.ObjectCountQuotaResourceNameFor(schema.GroupResource{Group: "apps", Resource: "deployments"}),
		corev1.ResourceName(federatedtypes.QuotaCountName(schema.GroupResource{Group: "apps", Resource: "deployments"})))
}

func TestResourcesMapEveryServedVersionToTheCountedResource(t *testing.T) {
	r := Resources()
	apps := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	assert.Equal(t, apps, r[schema.GroupResource{Group: "apps", Resource: "deployments"}])
	assert.Equal(t, apps, r[schema.GroupResource{Group: "extensions", Resource: "deployments"}], "served under extensions/v1beta1 too")
	assert.Equal(t, "v2", r[schema.GroupResource{Group: "autoscaling", Resource: "horizontalpodautoscalers"}].Version)
	assert.Contains(t, r, schema.GroupResource{Resource: "configmaps"})
	assert.NotContains(t, r, schema.GroupResource{Resource: "namespaces"}, "not namespaced")
	assert.NotContains(t, r, schema.GroupResource{Resource: "events"}, "not federated")
	assert.NotContains(t, r, schema.GroupResource{Resource: "pods"}, "not served")
}

func object(apiVersion, kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	u.SetNamespace(ns)
	u.SetName(name)
	if spec != nil {
		u.Object["spec"] = spec
	}
	return u
}

// TestCalculateUsageCountsTheFederationsObjects counts objects in caches
// such as the controller manager's dynamic informers hold, per namespace.
func TestCalculateUsageCountsTheFederationsObjects(t *testing.T) {
	lb := map[string]any{"type": "LoadBalancer", "ports": []any{map[string]any{"port": int64(80)}, map[string]any{"port": int64(443)}}}
	nodePort := map[string]any{"type": "NodePort", "ports": []any{map[string]any{"port": int64(80)}}}
	objects := map[schema.GroupVersionResource][]*unstructured.Unstructured{
		{Version: "v1", Resource: "configmaps"}: {object("v1", "ConfigMap", "a", "one", nil), object("v1", "ConfigMap", "a", "two", nil),
			object("v1", "ConfigMap", "b", "three", nil)},
		{Version: "v1", Resource: "services"}: {object("v1", "Service", "a", "lb", lb), object("v1", "Service", "a", "np", nodePort),
			object("v1", "Service", "a", "ip", map[string]any{"type": "ClusterIP"})},
		{Group: "apps", Version: "v1", Resource: "deployments"}: {object("apps/v1", "Deployment", "a", "web", nil)},
	}
	listers := func(gvr schema.GroupVersionResource) (cache.GenericLister, error) {
		indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		for _, o := range objects[gvr] {
			require.NoError(t, indexer.Add(o))
		}
		return cache.NewGenericLister(indexer, gvr.GroupResource()), nil
	}
	registry := generic.NewRegistry(Evaluators(listers))
	q := func(s string) resource.Quantity { return resource.MustParse(s) }
	for _, tc := range []struct {
		namespace  string
		hard, want corev1.ResourceList
	}{
		{"a", corev1.ResourceList{"count/configmaps": q("5"), "configmaps": q("5")}, corev1.ResourceList{"count/configmaps": q("2"), "configmaps": q("2")}},
		{"b", corev1.ResourceList{"count/configmaps": q("5")}, corev1.ResourceList{"count/configmaps": q("1")}},
		{"a", corev1.ResourceList{"services": q("9"), "services.loadbalancers": q("1"), "services.nodeports": q("9")},
			corev1.ResourceList{"services": q("3"), "services.loadbalancers": q("1"), "services.nodeports": q("3")}},
		{"a", corev1.ResourceList{"count/deployments.apps": q("1"), "count/secrets": q("1")},
			corev1.ResourceList{"count/deployments.apps": q("1"), "count/secrets": q("0")}},
		{"a", corev1.ResourceList{"requests.cpu": q("1"), "pods": q("1"), "count/pods": q("1")}, corev1.ResourceList{}},
	} {
		used, err := quota.CalculateUsage(tc.namespace, nil, tc.hard, registry, nil)
		require.NoError(t, err)
		assert.True(t, quota.Equals(tc.want, used), "%s %v: got %v, want %v", tc.namespace, tc.hard, used, tc.want)
	}
}

// TestServiceUsage as Kubernetes' service evaluator, from every form a
// Service comes in (admission: internal; caches: unstructured).
func TestServiceUsage(t *testing.T) {
	e := newServiceEvaluator(nil)
	ports := []corev1.ServicePort{{Port: 80}, {Port: 443, NodePort: 30443}}
	for _, tc := range []struct {
		name             string
		spec             corev1.ServiceSpec
		loadBalancers, n int64
	}{
		{"ClusterIP", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: ports}, 0, 0},
		{"NodePort", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: ports}, 0, 2},
		{"LoadBalancer", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports}, 1, 2},
		{"LoadBalancer without node ports", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports,
			AllocateLoadBalancerNodePorts: ptr.To(false)}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v1 := &corev1.Service{Spec: tc.spec}
			internal := &api.Service{Spec: api.ServiceSpec{Type: api.ServiceType(tc.spec.Type), AllocateLoadBalancerNodePorts: tc.spec.AllocateLoadBalancerNodePorts}}
			for _, p := range tc.spec.Ports {
				internal.Spec.Ports = append(internal.Spec.Ports, api.ServicePort{Port: p.Port, NodePort: p.NodePort})
			}
			raw := object("v1", "Service", "a", "s", nil)
			raw.Object["spec"] = map[string]any{"type": string(tc.spec.Type)}
			var rawPorts []any
			for _, p := range tc.spec.Ports {
				m := map[string]any{"port": int64(p.Port)}
				if p.NodePort != 0 {
					m["nodePort"] = int64(p.NodePort)
				}
				rawPorts = append(rawPorts, m)
			}
			raw.Object["spec"].(map[string]any)["ports"] = rawPorts
			if a := tc.spec.AllocateLoadBalancerNodePorts; a != nil {
				raw.Object["spec"].(map[string]any)["allocateLoadBalancerNodePorts"] = *a
			}
			want := corev1.ResourceList{"count/services": *resource.NewQuantity(1, resource.DecimalSI), "services": *resource.NewQuantity(1, resource.DecimalSI),
				"services.loadbalancers": *resource.NewQuantity(tc.loadBalancers, resource.DecimalSI),
				"services.nodeports":     *resource.NewQuantity(tc.n, resource.DecimalSI)}
			for _, obj := range []runtime.Object{v1, internal, raw} {
				used, err := e.Usage(obj)
				require.NoError(t, err)
				assert.True(t, quota.Equals(want, used), "%T: got %v, want %v", obj, used, want)
			}
		})
	}
}
