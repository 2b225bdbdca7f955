package membercluster

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	fedfake "github.com/federation-v1/federation/pkg/generated/clientset/versioned/fake"
	fedinformers "github.com/federation-v1/federation/pkg/generated/informers/externalversions"
	"github.com/federation-v1/federation/pkg/poll"
)

// openWatches counts, by resource, the watches of a fake member client
// that are open.
type openWatches struct {
	mu   sync.Mutex
	open map[schema.GroupVersionResource]int
}

func (o *openWatches) count(gvr schema.GroupVersionResource) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.open[gvr]
}

// countedWatch is a watch that tells openWatches when it is stopped.
type countedWatch struct {
	watch.Interface
	once sync.Once
	stop func()
}

func (w *countedWatch) Stop() {
	w.once.Do(w.stop)
	w.Interface.Stop()
}

// countWatches makes client's watches counted.
func countWatches(client *dynamicfake.FakeDynamicClient) *openWatches {
	o := &openWatches{open: map[schema.GroupVersionResource]int{}}
	client.PrependWatchReactor("*", func(action clienttesting.Action) (bool, watch.Interface, error) {
		gvr := action.GetResource()
		w, err := client.Tracker().Watch(gvr, action.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		o.mu.Lock()
		o.open[gvr]++
		o.mu.Unlock()
		return true, &countedWatch{Interface: w, stop: func() {
			o.mu.Lock()
			o.open[gvr]--
			o.mu.Unlock()
		}}, nil
	})
	return o
}

// customResource is the resource of the i-th test CRD.
func customResource(i int) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: fmt.Sprintf("g%d.example.com", i), Version: "v1", Resource: "widgets"}
}

// unwatchFixture is a manager with two Ready members whose clients are
// fakes holding a labelled ConfigMap and, for each of n custom resources,
// a labelled object.
type unwatchFixture struct {
	m       *Manager
	fed     *fedfake.Clientset
	watches map[string]*openWatches
}

var configMapsResource = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func newUnwatchFixture(t *testing.T, ctx context.Context, n int) *unwatchFixture {
	t.Helper()
	fed := fedfake.NewSimpleClientset(readyCluster("c1", corev1.ConditionTrue, nil), readyCluster("c2", corev1.ConditionTrue, nil))
	kube := kubefake.NewSimpleClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: federationv1beta1.SystemNamespace}, Data: map[string][]byte{TokenKey: []byte("t")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "c2", Namespace: federationv1beta1.SystemNamespace}, Data: map[string][]byte{TokenKey: []byte("t")}})
	fedFactory := fedinformers.NewSharedInformerFactory(fed, 0)
	kubeFactory := kubeinformers.NewSharedInformerFactory(kube, 0)
	m, err := NewManager("fed", "fed-uid", fedFactory.Federation().V1beta1().Clusters(), kubeFactory.Core().V1().Secrets())
	require.NoError(t, err)
	f := &unwatchFixture{m: m, fed: fed, watches: map[string]*openWatches{}}
	clients := map[string]*Clients{}
	for _, name := range []string{"c1", "c2"} {
		lists := map[schema.GroupVersionResource]string{configMapsResource: "ConfigMapList", NamespacesResource: "NamespaceList"}
		objects := []k8sruntime.Object{labelled("v1", "ConfigMap", "ns", "cm")}
		for i := range n {
			gvr := customResource(i)
			lists[gvr] = "WidgetList"
			objects = append(objects, labelled(gvr.GroupVersion().String(), "Widget", "ns", "w"))
		}
		dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(), lists, objects...)
		f.watches[name] = countWatches(dyn)
		scheme := metadatafake.NewTestScheme()
		require.NoError(t, metav1.AddMetaToScheme(scheme))
		clients[name] = &Clients{Dynamic: dyn, Metadata: metadatafake.NewSimpleMetadataClient(scheme)}
	}
	m.newClient = func(c *federationv1beta1.Cluster, _ *rest.Config) (*Clients, error) { return clients[c.Name], nil }
	// The federation's informers are watching once both fake clients were
	// asked to: from then on their goroutines all run, and the tests'
	// goroutine baselines hold still.
	var watching atomic.Int32
	countWatch := func(clienttesting.Action) (bool, watch.Interface, error) {
		watching.Add(1)
		return false, nil, nil
	}
	fed.PrependWatchReactor("*", countWatch)
	kube.PrependWatchReactor("*", countWatch)
	fedFactory.Start(ctx.Done())
	kubeFactory.Start(ctx.Done())
	fedFactory.WaitForCacheSync(ctx.Done())
	kubeFactory.WaitForCacheSync(ctx.Done())
	require.NoError(t, poll.Until(ctx, 10*time.Second, "the federation's informers watching", func(context.Context) error {
		if n := watching.Load(); n < 2 {
			return fmt.Errorf("%d watches", n)
		}
		return nil
	}))
	return f
}

func labelled(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetLabels(map[string]string{federationv1beta1.FederationLabel: "fed"})
	return u
}

// start starts both members' caches and waits until they are usable.
func (f *unwatchFixture) start(t *testing.T, ctx context.Context) {
	t.Helper()
	require.NoError(t, f.m.sync(ctx, "c1"))
	require.NoError(t, f.m.sync(ctx, "c2"))
	require.NoError(t, poll.Until(ctx, 10*time.Second, "both members usable", func(context.Context) error {
		if len(f.m.Clusters()) != 2 {
			return assert.AnError
		}
		return nil
	}))
}

// waitSynced waits until every member's cache of gvr has synced.
func (f *unwatchFixture) waitSynced(t *testing.T, ctx context.Context, gvrs ...schema.GroupVersionResource) {
	t.Helper()
	require.NoError(t, poll.Until(ctx, 10*time.Second, "the caches to sync", func(context.Context) error {
		for _, gvr := range gvrs {
			for _, c := range []string{"c1", "c2"} {
				if !f.m.Synced(c, gvr) || f.watches[c].count(gvr) != 1 {
					return fmt.Errorf("%s %s not synced", c, gvr)
				}
			}
		}
		return nil
	}))
}

// goroutinesBackTo waits, bounded, until no more goroutines run than at
// baseline.
func goroutinesBackTo(t *testing.T, baseline int) {
	t.Helper()
	require.NoError(t, poll.Until(context.Background(), 10*time.Second, "the goroutines to return", func(context.Context) error {
		if n := runtime.NumGoroutine(); n > baseline {
			return fmt.Errorf("%d goroutines, %d before", n, baseline)
		}
		return nil
	}))
}

func TestUnwatchStopsAResourcesInformerInEveryMember(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 20
	f := newUnwatchFixture(t, ctx, n)
	m := f.m
	// A built-in type, watched before the manager runs.
	builtin := &countingHandler{}
	m.Watch(configMapsResource, builtin)
	f.start(t, ctx)
	f.waitSynced(t, ctx, configMapsResource)
	builtinCM := m.members["c1"].resourceInformer(configMapsResource)
	assert.Equal(t, 2, m.Informers("c1"), "namespaces and ConfigMaps")
	baseline := runtime.NumGoroutine()

	// 20 custom resources watched while the members run, each by its own
	// handler, as the controllers of 20 CRDs do.
	handlers := make([]*countingHandler, n)
	for i := range n {
		handlers[i] = &countingHandler{}
		m.Watch(customResource(i), handlers[i])
		f.waitSynced(t, ctx, customResource(i))
		// Two handlers of one resource: one informer.
		m.WatchMetadata(customResource(i), handlers[i])
	}
	for _, c := range []string{"c1", "c2"} {
		assert.Equal(t, 2+n, m.Informers(c), "an informer per custom resource in %s", c)
		_, ok := m.Get(c, customResource(7), "ns", "w")
		assert.True(t, ok, "started at run time, it caches the member's objects")
	}
	assert.Greater(t, runtime.NumGoroutine(), baseline)

	// The CRDs go: each handler lets its resource go.
	for i := range n {
		m.Unwatch(customResource(i), handlers[i])
	}
	for _, c := range []string{"c1", "c2"} {
		assert.Equal(t, 2, m.Informers(c), "only the built-in informers are left in %s", c)
		for i := range n {
			assert.Zero(t, f.watches[c].count(customResource(i)), "%s: the watch of %s is closed", c, customResource(i))
			assert.False(t, m.Synced(c, customResource(i)))
			_, ok := m.Get(c, customResource(i), "ns", "w")
			assert.False(t, ok, "%s: the cache of %s is dropped", c, customResource(i))
		}
	}
	goroutinesBackTo(t, baseline)
	m.mu.RLock()
	assert.Equal(t, []schema.GroupVersionResource{NamespacesResource, configMapsResource}, m.resources, "a member that comes later starts no informer of them")
	assert.Len(t, m.handlers, 1, "the handlers are let go")
	m.mu.RUnlock()
	sizes := map[string]int{}
	m.recordCacheSizes()
	for c := range m.members {
		sizes[c] = len(m.members[c].cacheSizes())
	}
	assert.Equal(t, map[string]int{"c1": 2, "c2": 2}, sizes)

	// The built-in type is unaffected: the same informer, still synced.
	assert.Same(t, builtinCM, m.members["c1"].resourceInformer(configMapsResource))
	assert.True(t, m.Synced("c1", configMapsResource))
	_, ok := m.Get("c2", configMapsResource, "ns", "cm")
	assert.True(t, ok)
	// A handler that lets go of what it never watched, or of the
	// namespaces the manager watches itself, stops nothing.
	m.Unwatch(configMapsResource, handlers[0])
	other := &countingHandler{}
	m.WatchMetadata(NamespacesResource, other)
	m.Unwatch(NamespacesResource, other)
	assert.Equal(t, 2, m.Informers("c1"))
	assert.True(t, m.Synced("c1", configMapsResource))
	assert.True(t, m.Synced("c1", NamespacesResource))

	// An unwatched handler is told nothing more.
	told, builtinTold := handlers[3].changed.Load(), builtin.changed.Load()
	changed := labelled("v1", "ConfigMap", "ns", "cm")
	changed.SetAnnotations(map[string]string{"a": "b"})
	require.NoError(t, f.members("c1").Tracker().Update(configMapsResource, changed, "ns"))
	require.NoError(t, poll.Until(ctx, 10*time.Second, "the built-in handler told", func(context.Context) error {
		if builtin.changed.Load() == builtinTold {
			return assert.AnError
		}
		return nil
	}))
	assert.Equal(t, told, handlers[3].changed.Load())
}

// members returns the fake dynamic client of a member.
func (f *unwatchFixture) members(name string) *dynamicfake.FakeDynamicClient {
	return f.m.members[name].clients.Dynamic.(*dynamicfake.FakeDynamicClient)
}

func TestWatchOfWholeObjectsReplacesAMetadataOnlyInformer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newUnwatchFixture(t, ctx, 1)
	m := f.m
	f.start(t, ctx)
	meta, whole := &countingHandler{}, &countingHandler{}
	gvr := customResource(0)
	m.WatchMetadata(gvr, meta)
	assert.True(t, m.members["c1"].resourceInformer(gvr).metadataOnly)
	m.Watch(gvr, whole)
	f.waitSynced(t, ctx, gvr)
	assert.False(t, m.members["c1"].resourceInformer(gvr).metadataOnly, "a handler wants whole objects")
	assert.Equal(t, 2, m.Informers("c1"))
	m.Unwatch(gvr, whole)
	assert.True(t, m.Synced("c1", gvr), "still watched by the other handler")
	m.Unwatch(gvr, meta)
	assert.Equal(t, 1, m.Informers("c1"))
	assert.Zero(t, f.watches["c1"].count(gvr))
}

func TestARemovedMemberStopsAllItsInformers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 20
	f := newUnwatchFixture(t, ctx, n)
	m := f.m
	m.Watch(configMapsResource, &countingHandler{})
	baseline := runtime.NumGoroutine()
	f.start(t, ctx)
	for i := range n {
		m.Watch(customResource(i), &countingHandler{})
	}
	f.waitSynced(t, ctx, configMapsResource)
	for i := range n {
		f.waitSynced(t, ctx, customResource(i))
	}
	assert.Equal(t, 2+n, m.Informers("c1"))

	// Both members go (no longer Ready, then deleted).
	c1, err := f.fed.FederationV1beta1().Clusters().Get(ctx, "c1", metav1.GetOptions{})
	require.NoError(t, err)
	c1.Status.Conditions[0].Status = corev1.ConditionFalse
	_, err = f.fed.FederationV1beta1().Clusters().Update(ctx, c1, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, f.fed.FederationV1beta1().Clusters().Delete(ctx, "c2", metav1.DeleteOptions{}))
	require.NoError(t, poll.Until(ctx, 10*time.Second, "the clusters' cache", func(context.Context) error {
		if c, err := m.clusters.Get("c1"); err != nil || IsReady(c) {
			return assert.AnError
		}
		if _, err := m.clusters.Get("c2"); err == nil {
			return assert.AnError
		}
		return nil
	}))
	require.NoError(t, m.sync(ctx, "c1"))
	require.NoError(t, m.sync(ctx, "c2"))
	for _, c := range []string{"c1", "c2"} {
		assert.Zero(t, m.Informers(c))
		for gvr := range f.watches[c].open {
			assert.Zero(t, f.watches[c].count(gvr), "%s: the watch of %s is closed", c, gvr)
		}
	}
	goroutinesBackTo(t, baseline)
}
