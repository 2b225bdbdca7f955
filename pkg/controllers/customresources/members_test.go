package customresources

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation"
	"github.com/federation-v1/federation/pkg/membercluster"
)

// fakeManager has usable clusters with fake clients, and records the
// handlers added to it.
type fakeManager struct {
	propagation.Members
	mu      sync.Mutex
	clients map[string]dynamic.Interface
	// memberCRDs are the members' CRDs, by cluster.
	memberCRDs map[string]*unstructured.Unstructured
	handlers   map[schema.GroupVersionResource][]membercluster.Handler
	// metadataOnly says how each resource was last watched; restarted
	// lists the RestartUnsynced calls ("cluster resource").
	metadataOnly map[schema.GroupVersionResource]bool
	restarted    []string
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

func (m *fakeManager) Watch(gvr schema.GroupVersionResource, h membercluster.Handler) {
	m.watch(gvr, h, false)
}

func (m *fakeManager) WatchMetadata(gvr schema.GroupVersionResource, h membercluster.Handler) {
	m.watch(gvr, h, true)
}

func (m *fakeManager) watch(gvr schema.GroupVersionResource, h membercluster.Handler, metadataOnly bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.metadataOnly == nil {
		m.metadataOnly = map[schema.GroupVersionResource]bool{}
	}
	m.metadataOnly[gvr] = metadataOnly
	if !slices.Contains(m.handlers[gvr], h) {
		m.handlers[gvr] = append(m.handlers[gvr], h)
	}
}

func (m *fakeManager) Unwatch(gvr schema.GroupVersionResource, h membercluster.Handler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.handlers[gvr] = slices.DeleteFunc(m.handlers[gvr], func(o membercluster.Handler) bool { return o == h })
	if len(m.handlers[gvr]) == 0 {
		delete(m.handlers, gvr)
	}
}

func (m *fakeManager) RestartUnsynced(cluster string, gvr schema.GroupVersionResource) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.restarted = append(m.restarted, cluster+" "+gvr.Resource)
}

// watches counts the handlers of each resource.
func (m *fakeManager) watches() map[schema.GroupVersionResource]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[schema.GroupVersionResource]int{}
	for gvr, hs := range m.handlers {
		out[gvr] = len(hs)
	}
	return out
}

// tell tells the handlers of gvr of an event.
func (m *fakeManager) tell(cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	m.mu.Lock()
	hs := slices.Clone(m.handlers[gvr])
	m.mu.Unlock()
	for _, h := range hs {
		h.MemberChanged(cluster, gvr, obj)
	}
}

// Get reads the members' CRDs only (memberCRDs, by cluster).
func (m *fakeManager) Get(cluster string, gvr schema.GroupVersionResource, _, name string) (*unstructured.Unstructured, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if crd := m.memberCRDs[cluster]; gvr == CRDResource && crd != nil && crd.GetName() == name {
		return crd, true
	}
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

func TestMemberCachesWatchWhileTheControllerRunsAndLetGo(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "certs.example.com", Version: "v1", Resource: "certificates"}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	m := &fakeManager{clients: map[string]dynamic.Interface{}, handlers: map[schema.GroupVersionResource][]membercluster.Handler{}}
	const crd = "certificates.certs.example.com"
	caches := newMemberCaches(m, gvr, crd)
	r := &recorder{}
	// As propagation.New does: the resource (asked for its metadata
	// here), and a resource its copies name.
	caches.WatchMetadata(gvr, r)
	caches.WatchMetadata(secrets, r)
	assert.Empty(t, m.watches(), "nothing is watched before start")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	caches.start(ctx)
	assert.Equal(t, map[schema.GroupVersionResource]int{gvr: 1, secrets: 1, membercluster.NamespacesResource: 1, CRDResource: 1}, m.watches())
	assert.False(t, m.metadataOnly[gvr], "custom resources are cached whole")
	assert.True(t, m.metadataOnly[secrets])
	assert.True(t, m.metadataOnly[CRDResource])

	m.tell("c1", gvr, certificateObject("ours", true))
	m.tell("c1", membercluster.NamespacesResource, namespaceObject("e2e"))
	m.tell("c1", CRDResource, crdNamed("other.example.com"))
	m.tell("c2", CRDResource, crdNamed(crd))
	caches.ClustersChanged()
	r.mu.Lock()
	assert.Equal(t, []string{"c1 certificates ours", "c1 namespaces e2e"}, r.changed, "CRDs are not passed on")
	assert.Equal(t, 1, r.clusters)
	r.mu.Unlock()
	assert.Equal(t, []string{"c2 certificates"}, m.restarted, "the CRD's copy restarts an informer waiting for the resource")

	// Stopped, it tells nothing more; released, it watches nothing.
	cancel()
	m.tell("c1", gvr, certificateObject("later", true))
	caches.ClustersChanged()
	caches.release()
	assert.Empty(t, m.watches(), "every watch is let go")
	m.tell("c1", gvr, certificateObject("after", true))
	r.mu.Lock()
	assert.Len(t, r.changed, 2)
	assert.Equal(t, 1, r.clusters)
	r.mu.Unlock()
}

func namespaceObject(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Namespace")
	u.SetName(name)
	return u
}

func crdNamed(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	u.SetName(name)
	return u
}
