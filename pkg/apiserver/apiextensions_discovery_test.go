package apiserver

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionslisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/endpoints/discovery"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

func crd(name, group string, versions ...string) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: group}}
	for _, v := range versions {
		c.Spec.Versions = append(c.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: v, Served: v != "v0"})
	}
	return c
}

func TestCRDGroupsAreListedInUnaggregatedDiscovery(t *testing.T) {
	groups := discovery.NewRootAPIsHandler(discovery.DefaultAddresses{DefaultAddress: "127.0.0.1"}, legacyscheme.Codecs)
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	g, err := newCRDGroups(groups, cache.NewSharedIndexInformer(&cache.ListWatch{}, &apiextensionsv1.CustomResourceDefinition{}, 0, cache.Indexers{}),
		apiextensionslisters.NewCustomResourceDefinitionLister(indexer), nil)
	require.NoError(t, err)
	listed := func() map[string][]string {
		out := map[string][]string{}
		list, err := groups.Groups(t.Context(), httptest.NewRequest("GET", "/apis", nil))
		require.NoError(t, err)
		for _, group := range list {
			for _, v := range group.Versions {
				out[group.Name] = append(out[group.Name], v.Version)
			}
			assert.Equal(t, group.Versions[0], group.PreferredVersion)
		}
		return out
	}
	assert.Equal(t, map[string][]string{"apiextensions.k8s.io": {"v1"}}, listed())

	require.NoError(t, indexer.Add(crd("certificates.certs.example.com", "certs.example.com", "v1beta1", "v1", "v0")))
	require.NoError(t, indexer.Add(crd("widgets.certs.example.com", "certs.example.com", "v2alpha1")))
	require.NoError(t, indexer.Add(crd("gadgets.example.com", "example.com", "v1")))
	g.sync()
	assert.Equal(t, map[string][]string{
		"apiextensions.k8s.io": {"v1"},
		"certs.example.com":    {"v1", "v1beta1", "v2alpha1"},
		"example.com":          {"v1"},
	}, listed(), "served versions only, Kubernetes' preferred first")

	require.NoError(t, indexer.Delete(crd("gadgets.example.com", "example.com")))
	g.sync()
	assert.NotContains(t, listed(), "example.com", "a group goes with its last CRD")
}
