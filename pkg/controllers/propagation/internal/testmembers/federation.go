package testmembers

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// Federation is the federation side of a test: a fake client holding fed,
// objects of type t, and the informer cache of them (indexer) with its
// lister.
func Federation(t *testing.T, typ *federatedtypes.Type, fed ...*unstructured.Unstructured) (*dynamicfake.FakeDynamicClient, cache.Indexer, cache.GenericLister) {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	var objs []runtime.Object
	for _, o := range fed {
		require.NoError(t, indexer.Add(o))
		objs = append(objs, o)
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{typ.Resource: typ.Kind + "List"}, objs...)
	return client, indexer, cache.NewGenericLister(indexer, typ.Resource.GroupResource())
}
