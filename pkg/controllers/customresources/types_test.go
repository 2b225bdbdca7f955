package customresources

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
)

func certificateCRD(annotations map[string]string, status bool) *apiextensionsv1.CustomResourceDefinition {
	object := apiextensionsv1.JSONSchemaProps{Type: "object"}
	v := func(name string, storage bool) apiextensionsv1.CustomResourceDefinitionVersion {
		out := apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: true, Storage: storage,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "metadata": object,
					"spec": object, "data": object, "status": object,
				}}}}
		if status {
			out.Subresources = &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}
		}
		return out
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "certificates.certs.example.com", Annotations: annotations},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "certs.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: "certificates", Kind: "Certificate"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{v("v1alpha1", false), v("v1", true)},
		},
	}
}

func TestTypeIsTheStorageVersionWithEveryFieldButMetadataAndStatus(t *testing.T) {
	typ, err := Type(certificateCRD(nil, true))
	require.NoError(t, err)
	assert.Equal(t, "certificates.certs.example.com", typ.Name)
	assert.Equal(t, schema.GroupVersionResource{Group: "certs.example.com", Version: "v1", Resource: "certificates"}, typ.Resource)
	assert.Equal(t, "Certificate", typ.Kind)
	assert.True(t, typ.Namespaced)
	assert.False(t, typ.Finalized, "custom resources delete at once, from tombstones")
	assert.True(t, typ.DropsFinalizer, "the finalizer of custom resources made before tombstones comes off")
	assert.Equal(t, []string{"data", "spec"}, typ.Fields)
	assert.True(t, typ.Conditions)
	require.NotNil(t, typ.Status)
}

func TestTypeWithoutStatusSubresourceWritesOnlyTheAnnotation(t *testing.T) {
	typ, err := Type(certificateCRD(nil, false))
	require.NoError(t, err)
	assert.False(t, typ.Conditions)
	status, annotations := typ.Status(members(t, map[string]string{"c1": `{"status":{"phase":"Issued"}}`}))
	assert.Nil(t, status)
	assert.JSONEq(t, `{"c1":{"phase":"Issued"}}`, annotations[ClusterStatusAnnotation])
}

func TestTypeRefusesABadAggregationAnnotation(t *testing.T) {
	for _, value := range []string{`readyReplicas: sum`, `{"readyReplicas":"avg"}`, `{"conditions":"sum"}`, `{"a..b":"sum"}`} {
		_, err := Type(certificateCRD(map[string]string{AggregationAnnotation: value}, true))
		require.Error(t, err, value)
		assert.Contains(t, err.Error(), AggregationAnnotation)
	}
}

func TestTypeNeedsAServedStorageVersion(t *testing.T) {
	crd := certificateCRD(nil, true)
	crd.Spec.Versions[1].Served = false
	_, err := Type(crd)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "storage version is not served")
}

func TestTheClusterStatusAnnotationDoesNotTravel(t *testing.T) {
	typ, err := Type(certificateCRD(nil, true))
	require.NoError(t, err)
	fed := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "certs.example.com/v1", "kind": "Certificate", "spec": map[string]any{"secretName": "s"}}}
	fed.SetName("web")
	fed.SetNamespace("e2e")
	fed.SetAnnotations(map[string]string{ClusterStatusAnnotation: `{"c1":{}}`, "team": "a"})
	desired, _, err := plan.Desired(typ, fed, "fed", "uid")
	require.NoError(t, err)
	assert.NotContains(t, desired.GetAnnotations(), ClusterStatusAnnotation)
	assert.Equal(t, "a", desired.GetAnnotations()["team"])
	assert.Equal(t, map[string]any{"secretName": "s"}, desired.Object["spec"])
	assert.Equal(t, `{"c1":{}}`, fed.GetAnnotations()[ClusterStatusAnnotation], "the federated object keeps it")
}
