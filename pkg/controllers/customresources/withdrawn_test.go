package customresources

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation"
	"github.com/federation-v1/federation/pkg/membercluster"
)

const certificatesCRD = "certificates.certs.example.com"

// withdrawnFixture is a controller over a CRD cache, its members' CRDs
// given by the test.
func withdrawnFixture(t *testing.T, enabled *bool) (*Controller, cache.Store, *fakeManager) {
	fed := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(), map[schema.GroupVersionResource]string{
		CRDResource: "CustomResourceDefinitionList",
	})
	crds := dynamicinformer.NewDynamicSharedInformerFactory(fed, 0).ForResource(CRDResource)
	m := &fakeManager{clients: map[string]dynamic.Interface{}, handlers: map[schema.GroupVersionResource][]membercluster.Handler{},
		memberCRDs: map[string]*unstructured.Unstructured{}}
	c, err := New(fed, crds, m, func(string) bool { return *enabled }, record.NewFakeRecorder(10), propagation.Options{Workers: 1})
	require.NoError(t, err)
	return c, crds.Informer().GetStore(), m
}

// deleting is the federation's CRD being deleted, with finalizers.
func deleting(t *testing.T, finalizers ...string) *unstructured.Unstructured {
	obj := crdObject(t, certificateCRD(nil, true), true)
	obj.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
	obj.SetFinalizers(finalizers)
	return obj
}

// memberCRD is a member's CRD: the federation's copy (labelled, adopted or
// not) or the member's own.
func memberCRD(labels, annotations map[string]string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{}}
	o.SetName(certificatesCRD)
	o.SetLabels(labels)
	o.SetAnnotations(annotations)
	return o
}

func TestDependentsOfADeletedCRD(t *testing.T) {
	enabled := true
	c, store, _ := withdrawnFixture(t, &enabled)
	ours := federationv1beta1.FinalizerDeleteFromUnderlyingClusters

	crd := deleting(t, apiextensionsv1.CustomResourceCleanupFinalizer, ours)
	assert.Equal(t, "its custom resources are being deleted at the federation", c.Dependents(crd))

	crd = deleting(t, ours)
	require.NoError(t, store.Add(crd))
	assert.Equal(t, "the propagation controller of its custom resources is starting", c.Dependents(crd),
		"Established and propagated: its controller must say what is left")

	enabled = false
	assert.Empty(t, c.Dependents(crd), "its custom resources are not propagated: nothing to wait for")
	enabled = true

	notEstablished := crdObject(t, certificateCRD(nil, true), false)
	notEstablished.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
	assert.Empty(t, c.Dependents(notEstablished), "never Established: no copies")
}

func TestWithdrawnWhereTheMembersCRDDoesNotTakeTheCopies(t *testing.T) {
	enabled := true
	c, store, m := withdrawnFixture(t, &enabled)
	ourLabels := map[string]string{federationv1beta1.FederationLabel: "fed", federationv1beta1.FederationUIDLabel: "uid"}
	m.memberCRDs["ours"] = memberCRD(ourLabels, nil)
	m.memberCRDs["adopted"] = memberCRD(ourLabels, map[string]string{federationv1beta1.AdoptedAnnotation: "true"})
	m.memberCRDs["theirs"] = memberCRD(nil, nil)
	uid := crdObject(t, certificateCRD(nil, true), true).GetUID()
	type answer struct{ withdrawn, keep bool }
	ask := func(cluster string) answer {
		w, k := c.withdrawn(certificatesCRD, uid, cluster)
		return answer{w, k}
	}

	require.NoError(t, store.Add(crdObject(t, certificateCRD(nil, true), true)))
	for _, cl := range []string{"ours", "adopted", "theirs", "none"} {
		assert.Equal(t, answer{false, false}, ask(cl), "%s: not being deleted", cl)
	}

	require.NoError(t, store.Update(deleting(t)))
	assert.Equal(t, answer{false, false}, ask("ours"), "our CRD's copy there takes its resources with it")
	for _, cl := range []string{"adopted", "theirs", "none"} {
		assert.Equal(t, answer{true, false}, ask(cl), "%s: its copies are deleted one by one", cl)
	}

	require.NoError(t, store.Update(deleting(t, metav1.FinalizerOrphanDependents)))
	assert.Equal(t, answer{true, true}, ask("ours"), "deleted with Orphan: every copy is given back")
	require.NoError(t, store.Update(deleting(t)))
	assert.Equal(t, answer{true, true}, ask("theirs"), "still given back once the orphan finalizer is off")

	other := deleting(t)
	other.SetUID("uid-2")
	require.NoError(t, store.Update(other))
	assert.Equal(t, answer{false, false}, ask("theirs"), "another CRD of the name: not this controller's to let go")

	require.NoError(t, store.Delete(other))
	assert.Equal(t, answer{true, true}, ask("theirs"), "gone: what was asked still holds")
}
