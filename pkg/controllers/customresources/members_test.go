package customresources

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation"
	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/poll"
)

// fakeManager has usable clusters with fake clients, and records the
// handlers added to it.
type fakeManager struct {
	propagation.Members
	mu       sync.Mutex
	clients  map[string]dynamic.Interface
	handlers map[schema.GroupVersionResource][]membercluster.Handler
}

func (m *fakeManager) Federation() string    { return "fed" }
func (m *fakeManager) FederationUID() string { return "uid" }

func (m *fakeManager) AllClusters() ([]*federationv1beta1.Cluster, error) { return m.Clusters(), nil }

func (m *fakeManager) Clusters() []*federationv1beta1.Cluster {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*federationv1beta1.Cluster
	for name := range m.clients {
		out = append(out, &federationv1beta1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
	return out
}

func (m *fakeManager) Client(cluster string) (dynamic.Interface, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.clients[cluster], nil
}

func (m *fakeManager) WatchMetadata(gvr schema.GroupVersionResource, h membercluster.Handler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.handlers[gvr] = append(m.handlers[gvr], h)
}

func (m *fakeManager) Get(string, schema.GroupVersionResource, string, string) (*unstructured.Unstructured, bool) {
	return nil, false
}

// recorder is the propagation controller's side: the events it is given.
type recorder struct {
	mu       sync.Mutex
	changed  []string
	clusters int
}

func (r *recorder) MemberChanged(cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changed = append(r.changed, cluster+" "+gvr.Resource+" "+obj.GetName())
}

func (r *recorder) ClustersChanged() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clusters++
}

func certificateObject(name string, labelled bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("certs.example.com/v1")
	u.SetKind("Certificate")
	u.SetNamespace("e2e")
	u.SetName(name)
	if labelled {
		u.SetLabels(map[string]string{federationv1beta1.FederationLabel: "fed"})
	}
	return u
}

func TestMemberCachesHoldTheFederationsCopiesOfUsableClusters(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "certs.example.com", Version: "v1", Resource: "certificates"}
	lists := map[schema.GroupVersionResource]string{gvr: "CertificateList"}
	c1 := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, certificateObject("ours", true), certificateObject("theirs", false))
	c2 := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists)
	m := &fakeManager{clients: map[string]dynamic.Interface{"c1": c1, "c2": c2}, handlers: map[schema.GroupVersionResource][]membercluster.Handler{}}
	caches := newMemberCaches(m, gvr, "certificates.certs.example.com")
	r := &recorder{}
	caches.Watch(gvr, r)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	caches.start(ctx)
	assert.Len(t, m.handlers[membercluster.NamespacesResource], 1, "namespace events reach the controller")

	require.NoError(t, poll.Until(ctx, 10*time.Second, "the caches to sync", func(context.Context) error {
		if !caches.Synced("c1", gvr) || !caches.Synced("c2", gvr) {
			return assert.AnError
		}
		return nil
	}))
	got, ok := caches.Get("c1", gvr, "e2e", "ours")
	require.True(t, ok)
	assert.Equal(t, "ours", got.GetName())
	_, ok = caches.Get("c1", gvr, "e2e", "theirs")
	assert.False(t, ok, "only what carries the federation's label is cached")
	assert.Len(t, caches.List("c1", gvr, "e2e", labels.Everything()), 1)
	assert.False(t, caches.Synced("c3", gvr), "no cache for a cluster that is not usable")

	// c2 leaves: its cache goes when the clusters change.
	m.mu.Lock()
	delete(m.clients, "c2")
	m.mu.Unlock()
	caches.ClustersChanged()
	assert.False(t, caches.Synced("c2", gvr))
	r.mu.Lock()
	assert.Equal(t, 1, r.clusters, "the controller is told of the clusters")
	assert.Contains(t, r.changed, "c1 certificates ours")
	r.mu.Unlock()

	// Stopped, it tells nothing more and holds nothing.
	cancel()
	require.NoError(t, poll.Until(context.Background(), 10*time.Second, "the caches to stop", func(context.Context) error {
		if caches.Synced("c1", gvr) {
			return assert.AnError
		}
		return nil
	}))
	caches.ClustersChanged()
	r.mu.Lock()
	assert.Equal(t, 1, r.clusters)
	r.mu.Unlock()
}
