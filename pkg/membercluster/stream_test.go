package membercluster

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/rest"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	fedfake "github.com/federation-v1/federation/pkg/generated/clientset/versioned/fake"
	fedinformers "github.com/federation-v1/federation/pkg/generated/informers/externalversions"
	"github.com/federation-v1/federation/pkg/poll"
)

var eventsResource = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// streamed records what a stream hands over, by name.
type streamed struct {
	mu   sync.Mutex
	seen map[string]int
}

func (s *streamed) Streamed(cluster string, obj any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[cluster+"/"+obj.(string)]++
}

func (s *streamed) count(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[key]
}

func (s *streamed) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprint(s.seen)
}

func memberEvent(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Event", "type": "Warning"}}
	u.SetNamespace("ns")
	u.SetName(name)
	return u
}

func TestAStreamHandsOverEveryObjectAndKeepsNone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fed := fedfake.NewSimpleClientset(readyCluster("c1", corev1.ConditionTrue, nil))
	kube := kubefake.NewSimpleClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: federationv1beta1.SystemNamespace},
		Data: map[string][]byte{TokenKey: []byte("t")}})
	fedFactory := fedinformers.NewSharedInformerFactory(fed, 0)
	kubeFactory := kubeinformers.NewSharedInformerFactory(kube, 0)
	m, err := NewManager("fed", "fed-uid", fedFactory.Federation().V1beta1().Clusters(), kubeFactory.Core().V1().Secrets())
	require.NoError(t, err)
	copyOf := labelled("v1", "ConfigMap", "ns", "cm")
	copyOf.SetUID("cm-uid")
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(),
		map[schema.GroupVersionResource]string{eventsResource: "EventList", NamespacesResource: "NamespaceList", configMapsResource: "ConfigMapList"},
		memberEvent("before"), copyOf)
	scheme := metadatafake.NewTestScheme()
	require.NoError(t, metav1.AddMetaToScheme(scheme))
	m.newClient = func(*federationv1beta1.Cluster, *rest.Config) (*Clients, error) {
		return &Clients{Dynamic: dyn, Metadata: metadatafake.NewSimpleMetadataClient(scheme)}, nil
	}
	fedFactory.Start(ctx.Done())
	kubeFactory.Start(ctx.Done())
	fedFactory.WaitForCacheSync(ctx.Done())
	kubeFactory.WaitForCacheSync(ctx.Done())

	got := &streamed{seen: map[string]int{}}
	names := func(obj any) (any, error) {
		if s, ok := obj.(string); ok {
			return s, nil
		}
		return obj.(*unstructured.Unstructured).GetName(), nil
	}
	m.Stream(eventsResource, StreamOptions{FieldSelector: "type=Warning", Transform: names}, got)
	m.Watch(configMapsResource, &countingHandler{})
	baseline := runtime.NumGoroutine()
	require.NoError(t, m.sync(ctx, "c1"))
	wait := func(what string, check func() error) {
		t.Helper()
		require.NoError(t, poll.Until(ctx, 10*time.Second, what, func(context.Context) error { return check() }))
	}
	wait("the listed event", func() error {
		if got.count("c1/before") != 1 {
			return fmt.Errorf("seen %v", got)
		}
		return nil
	})
	_, err = dyn.Resource(eventsResource).Namespace("ns").Create(ctx, memberEvent("after"), metav1.CreateOptions{})
	require.NoError(t, err)
	wait("the added event", func() error {
		if got.count("c1/after") != 1 {
			return fmt.Errorf("seen %v", got)
		}
		return nil
	})
	assert.Equal(t, 2, m.Informers("c1"), "namespaces and ConfigMaps: the stream is no informer and caches nothing")

	wait("the ConfigMaps to sync", func() error {
		if !m.CachesSynced("c1") {
			return fmt.Errorf("not synced")
		}
		return nil
	})
	gvr, obj, ok := m.ByUID("c1", "cm-uid")
	require.True(t, ok, "a labelled object is found by UID")
	assert.Equal(t, configMapsResource, gvr)
	assert.Equal(t, "cm", obj.GetName())
	_, _, ok = m.ByUID("c1", types.UID("other"))
	assert.False(t, ok)
	assert.True(t, m.HasObjectsIn("c1", "ns"))
	assert.False(t, m.HasObjectsIn("c1", "elsewhere"))
	assert.False(t, m.HasObjectsIn("c2", "ns"), "no such member")

	// The member goes: its stream stops with its caches.
	_, err = fed.FederationV1beta1().Clusters().Update(ctx, readyCluster("c1", corev1.ConditionFalse, nil), metav1.UpdateOptions{})
	require.NoError(t, err)
	wait("the cluster's status in the cache", func() error {
		if c, err := m.clusters.Get("c1"); err != nil || IsReady(c) {
			return fmt.Errorf("still Ready")
		}
		return nil
	})
	require.NoError(t, m.sync(ctx, "c1"))
	goroutinesBackTo(t, baseline)
}
