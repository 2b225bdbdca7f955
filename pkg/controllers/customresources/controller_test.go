package customresources

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/record"

	"github.com/federation-v1/federation/pkg/controllers/propagation"
	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/poll"
)

// crdObject is crd as the federation's CRD cache holds it, Established or
// not.
func crdObject(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, established bool) *unstructured.Unstructured {
	crd = crd.DeepCopy()
	crd.APIVersion, crd.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
	crd.UID, crd.Generation = "uid-1", 1
	if established {
		crd.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
	}
	obj, err := k8sruntime.DefaultUnstructuredConverter.ToUnstructured(crd)
	require.NoError(t, err)
	return &unstructured.Unstructured{Object: obj}
}

func TestAControllerRunsWhileItsCRDIsEstablishedAndEnabled(t *testing.T) {
	certificates := schema.GroupVersionResource{Group: "certs.example.com", Version: "v1", Resource: "certificates"}
	fed := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(), map[schema.GroupVersionResource]string{
		CRDResource: "CustomResourceDefinitionList", certificates: "CertificateList",
	})
	crds := dynamicinformer.NewDynamicSharedInformerFactory(fed, 0).ForResource(CRDResource)
	store := crds.Informer().GetStore()
	m := &fakeManager{clients: map[string]dynamic.Interface{}, handlers: map[schema.GroupVersionResource][]membercluster.Handler{}}
	disabled := map[string]bool{}
	c, err := New(fed, crds, m, func(name string) bool { return !disabled[name] }, record.NewFakeRecorder(10),
		propagation.Options{Workers: 1, MemberTimeout: 1})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.ctx = ctx
	const name = "certificates.certs.example.com"
	running := func() *running {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.running[name]
	}

	require.NoError(t, store.Add(crdObject(t, certificateCRD(nil, true), false)))
	require.NoError(t, c.Sync(ctx, name))
	assert.Nil(t, running(), "not Established yet")

	require.NoError(t, store.Update(crdObject(t, certificateCRD(nil, true), true)))
	require.NoError(t, c.Sync(ctx, name))
	first := running()
	require.NotNil(t, first, "Established: its resources are propagated")
	require.NoError(t, c.Sync(ctx, name))
	assert.Same(t, first, running(), "nothing changed: the same controller")

	changed := crdObject(t, certificateCRD(map[string]string{AggregationAnnotation: `{"readyReplicas":"sum"}`}, true), true)
	require.NoError(t, store.Update(changed))
	require.NoError(t, c.Sync(ctx, name))
	require.NotNil(t, running())
	assert.NotSame(t, first, running(), "a new aggregation rule restarts it")
	<-first.done
	assert.Equal(t, map[schema.GroupVersionResource]int{certificates: 1, membercluster.NamespacesResource: 1, CRDResource: 1}, m.watches(),
		"the stopped controller's watches are let go, the new one's taken")

	disabled[name] = true
	second := running()
	require.NoError(t, c.Sync(ctx, name))
	assert.Nil(t, running(), "turned off by --controllers")
	<-second.done

	disabled[name] = false
	require.NoError(t, c.Sync(ctx, name))
	third := running()
	require.NotNil(t, third)
	require.NoError(t, store.Delete(changed))
	require.NoError(t, c.Sync(ctx, name))
	assert.Nil(t, running(), "the CRD is gone")
	<-third.done
	assert.Empty(t, m.watches(), "nothing is watched in the members for a CRD that went")
}

// TestCreatingAndDeleting20CRDsLeavesNothingRunning: the controllers of
// 20 CRDs watch their resources in the members while the CRDs are
// Established; once the CRDs are deleted, no watch is left and the
// goroutines are back to what they were.
func TestCreatingAndDeleting20CRDsLeavesNothingRunning(t *testing.T) {
	const n = 20
	widgets := func(i int) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: fmt.Sprintf("g%d.example.com", i), Version: "v1", Resource: "widgets"}
	}
	lists := map[schema.GroupVersionResource]string{CRDResource: "CustomResourceDefinitionList"}
	for i := range n {
		lists[widgets(i)] = "WidgetList"
	}
	fed := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(), lists)
	crds := dynamicinformer.NewDynamicSharedInformerFactory(fed, 0).ForResource(CRDResource)
	store := crds.Informer().GetStore()
	m := &fakeManager{clients: map[string]dynamic.Interface{}, handlers: map[schema.GroupVersionResource][]membercluster.Handler{}}
	c, err := New(fed, crds, m, func(string) bool { return true }, record.NewFakeRecorder(10*n),
		propagation.Options{Workers: 1, MemberTimeout: 1})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.ctx = ctx
	baseline := runtime.NumGoroutine()

	objs := make([]*unstructured.Unstructured, n)
	for i := range n {
		crd := certificateCRD(nil, true)
		crd.Name = "widgets." + widgets(i).Group
		crd.Spec.Group = widgets(i).Group
		crd.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"}
		objs[i] = crdObject(t, crd, true)
		require.NoError(t, store.Add(objs[i]))
		require.NoError(t, c.Sync(ctx, crd.Name))
	}
	watches := m.watches()
	for i := range n {
		assert.Equal(t, 1, watches[widgets(i)], "the members watch %s", widgets(i))
	}
	assert.Equal(t, n, watches[membercluster.NamespacesResource])
	assert.Len(t, c.running, n)
	assert.Greater(t, runtime.NumGoroutine(), baseline)

	for i := range n {
		require.NoError(t, store.Delete(objs[i]))
		require.NoError(t, c.Sync(ctx, objs[i].GetName()))
	}
	assert.Empty(t, c.running)
	assert.Empty(t, m.watches(), "no watch is left in the members")
	require.NoError(t, poll.Until(ctx, 10*time.Second, "the goroutines to return", func(context.Context) error {
		if got := runtime.NumGoroutine(); got > baseline {
			return fmt.Errorf("%d goroutines, %d before the CRDs", got, baseline)
		}
		return nil
	}))
}

func TestABadCRDIsAnEventNotAController(t *testing.T) {
	fed := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(), map[schema.GroupVersionResource]string{CRDResource: "CustomResourceDefinitionList"})
	crds := dynamicinformer.NewDynamicSharedInformerFactory(fed, 0).ForResource(CRDResource)
	m := &fakeManager{clients: map[string]dynamic.Interface{}, handlers: map[schema.GroupVersionResource][]membercluster.Handler{}}
	events := record.NewFakeRecorder(10)
	c, err := New(fed, crds, m, func(string) bool { return true }, events, propagation.Options{Workers: 1})
	require.NoError(t, err)
	c.ctx = context.Background()
	bad := crdObject(t, certificateCRD(map[string]string{AggregationAnnotation: `{"readyReplicas":"avg"}`}, true), true)
	require.NoError(t, crds.Informer().GetStore().Add(bad))
	require.NoError(t, c.Sync(context.Background(), bad.GetName()))
	assert.Empty(t, c.running)
	require.Len(t, events.Events, 1)
	assert.Contains(t, <-events.Events, ReasonBadCustomResourceDefinition)
}
