package kubefed

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/federation-v1/federation/pkg/controllers/customresources"
)

// strayCRD is a CRD of plural in example.com as the federation holds it.
func strayCRD(t *testing.T, plural string, established, deleting, served bool) *unstructured.Unstructured {
	crd := &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: "K" + plural},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: served, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}}},
		},
	}
	if established {
		crd.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
	}
	if deleting {
		crd.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	require.NoError(t, err)
	return &unstructured.Unstructured{Object: obj}
}

func TestStraysOfCustomResourcesAreLookedForInEveryPropagatedCRD(t *testing.T) {
	fed := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{customresources.CRDResource: "CustomResourceDefinitionList"},
		strayCRD(t, "gadgets", true, false, true),
		strayCRD(t, "pending", false, false, true),  // not Established: nothing propagated
		strayCRD(t, "going", true, true, true),      // being deleted: its copies are being let go
		strayCRD(t, "unserved", true, false, false), // its storage version not served: not propagated
	)
	types, err := customResourceTypes(context.Background(), fed)
	require.NoError(t, err)
	require.Len(t, types, 1)
	assert.Equal(t, schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}, types[0].Resource)
	assert.Equal(t, "Kgadgets", types[0].Kind)
}
