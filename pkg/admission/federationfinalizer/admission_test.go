package federationfinalizer

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/kubernetes/pkg/apis/apps"
	api "k8s.io/kubernetes/pkg/apis/core"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/generated/clientset/versioned/fake"
	informers "github.com/federation-v1/federation/pkg/generated/informers/externalversions"
)

var (
	configMaps  = api.Resource("configmaps").WithVersion("v1")
	deployments = apps.Resource("deployments").WithVersion("v1")
)

// federated are the resources the plugin is told of in these tests.
var federated = []schema.GroupResource{configMaps.GroupResource(), deployments.GroupResource(), api.Resource("namespaces")}

func ownNamespace(gr schema.GroupResource, namespace, name string) bool {
	return namespace == "federation-system" || (gr == api.Resource("namespaces") && name == "federation-system")
}

// plugin returns the plugin with clusters registered in its informer.
func plugin(t *testing.T, clusters ...string) *Plugin {
	return pluginSkipping(t, ownNamespace, clusters...)
}

// pluginSkipping is plugin with skip saying what is never propagated.
func pluginSkipping(t *testing.T, skip func(gr schema.GroupResource, namespace, name string) bool, clusters ...string) *Plugin {
	factory := informers.NewSharedInformerFactory(fake.NewSimpleClientset(), 0)
	p := New(federated, skip)
	PluginInitializer{Informers: factory}.Initialize(p)
	require.NoError(t, p.ValidateInitialization())
	store := factory.Federation().V1beta1().Clusters().Informer().GetStore()
	for _, c := range clusters {
		require.NoError(t, store.Add(&federationv1beta1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: c}}))
	}
	p.SetReadyFunc(func() bool { return true })
	return p
}

func TestAdmitSetsTheFinalizerOnNamespacesOnceAClusterHasJoined(t *testing.T) {
	namespaces := api.Resource("namespaces").WithVersion("v1")
	cases := []struct {
		name        string
		clusters    []string
		resource    schema.GroupVersionResource
		namespace   string
		object      runtime.Object
		subresource string
		operation   admission.Operation
		finalizers  []string
		want        []string
	}{
		{name: "namespace with a cluster", clusters: []string{"c1"}, resource: namespaces, object: &api.Namespace{},
			want: []string{Finalizer}},
		{name: "no cluster: nothing is propagated, deletion must not wait", resource: namespaces, object: &api.Namespace{}},
		{name: "other finalizers are kept", clusters: []string{"c1"}, resource: namespaces, object: &api.Namespace{},
			finalizers: []string{"example.com/x"}, want: []string{"example.com/x", Finalizer}},
		{name: "already there: not twice", clusters: []string{"c1"}, resource: namespaces, object: &api.Namespace{},
			finalizers: []string{Finalizer}, want: []string{Finalizer}},
		// Deleted at once, with a tombstone (pkg/apiserver/deletion.go).
		{name: "configmap: none", clusters: []string{"c1"}, resource: configMaps, namespace: "ns", object: &api.ConfigMap{}},
		{name: "deployment: none", clusters: []string{"c1"}, resource: deployments, namespace: "ns", object: &apps.Deployment{}},
		{name: "deployment through extensions: none", clusters: []string{"c1"}, namespace: "ns", object: &apps.Deployment{},
			resource: schema.GroupVersionResource{Group: "extensions", Version: "v1beta1", Resource: "deployments"}},
		{name: "a configmap that had one keeps it", clusters: []string{"c1"}, resource: configMaps, namespace: "ns", object: &api.ConfigMap{},
			finalizers: []string{Finalizer}, want: []string{Finalizer}},
		{name: "not a federated resource", clusters: []string{"c1"}, namespace: "ns", object: &api.Pod{}, resource: api.Resource("pods").WithVersion("v1")},
		{name: "an update", clusters: []string{"c1"}, object: &api.Namespace{}, resource: namespaces, operation: admission.Update},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := plugin(t, c.clusters...)
			obj := c.object.DeepCopyObject()
			accessor, err := meta.Accessor(obj)
			require.NoError(t, err)
			accessor.SetFinalizers(c.finalizers)
			accessor.SetNamespace(c.namespace)
			accessor.SetName("x")
			op := c.operation
			if op == "" {
				op = admission.Create
			}
			attrs := admission.NewAttributesRecord(obj, nil, schema.GroupVersionKind{}, c.namespace, "x", c.resource, c.subresource,
				op, nil, false, nil)
			if p.Handles(op) {
				require.NoError(t, p.Admit(context.Background(), attrs, nil))
			}
			assert.Equal(t, c.want, accessor.GetFinalizers())
		})
	}
}

func TestAdmitLeavesTheFederationsOwnNamespaceAlone(t *testing.T) {
	p := plugin(t, "c1")
	ns := &api.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "federation-system"}}
	attrs := admission.NewAttributesRecord(ns, nil, schema.GroupVersionKind{}, "", ns.Name, api.Resource("namespaces").WithVersion("v1"), "",
		admission.Create, nil, false, nil)
	require.NoError(t, p.Admit(context.Background(), attrs, nil))
	assert.Empty(t, ns.Finalizers)

	other := &api.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	attrs = admission.NewAttributesRecord(other, nil, schema.GroupVersionKind{}, "", other.Name, api.Resource("namespaces").WithVersion("v1"), "",
		admission.Create, nil, false, nil)
	require.NoError(t, p.Admit(context.Background(), attrs, nil))
	assert.Equal(t, []string{Finalizer}, other.Finalizers)
}

// As the apiserver registers the plugin: the members' system namespaces
// are never propagated, so their deletion waits for nobody.
func TestAdmitLeavesTheNeverPropagatedNamespacesAlone(t *testing.T) {
	p := pluginSkipping(t, federatedtypes.NeverPropagated, "c1")
	for _, name := range []string{"kube-system", "kube-public", "kube-node-lease", "federation-system"} {
		ns := &api.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		attrs := admission.NewAttributesRecord(ns, nil, schema.GroupVersionKind{}, "", name, api.Resource("namespaces").WithVersion("v1"), "",
			admission.Create, nil, false, nil)
		require.NoError(t, p.Admit(context.Background(), attrs, nil))
		assert.Empty(t, ns.Finalizers, "the Namespace %s", name)
	}
}

func TestValidateInitializationWantsTheInformers(t *testing.T) {
	err := New(federated, ownNamespace).ValidateInitialization()
	require.Error(t, err)
	assert.Contains(t, err.Error(), PluginName)
}
