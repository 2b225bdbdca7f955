package customresources

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/record"

	"github.com/federation-v1/federation/pkg/controllers/propagation"
	"github.com/federation-v1/federation/pkg/membercluster"
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
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	require.NoError(t, err)
	return &unstructured.Unstructured{Object: obj}
}

func TestAControllerRunsWhileItsCRDIsEstablishedAndEnabled(t *testing.T) {
	certificates := schema.GroupVersionResource{Group: "certs.example.com", Version: "v1", Resource: "certificates"}
	fed := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
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
}

func TestABadCRDIsAnEventNotAController(t *testing.T) {
	fed := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{CRDResource: "CustomResourceDefinitionList"})
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
