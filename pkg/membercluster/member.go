package membercluster

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/cachetrim"
)

// member is one usable member cluster: its clients and its caches of the
// objects the federation labelled. Each resource has its own informer,
// stopped on its own when the last handler of the resource goes (see
// Manager.Unwatch), so that the caches follow the resources watched while
// the member runs.
type member struct {
	name     string
	identity string
	clients  *Clients
	// selector is the federation's label selector.
	selector string
	changed  func(string, schema.GroupVersionResource, *unstructured.Unstructured)
	cancel   context.CancelFunc
	ctx      context.Context
	// started is when its caches started (Manager.Settled).
	started time.Time

	// mu guards informer and streams; it is never held while an
	// informer or a stream stops.
	mu       sync.RWMutex
	informer map[schema.GroupVersionResource]*resourceInformer
	streams  []*runningStream
}

// resourceInformer is one resource's informer in a member and what stops
// it.
type resourceInformer struct {
	informers.GenericInformer
	// metadataOnly: the informer holds only metadata.
	metadataOnly bool
	// errors are its list and watch errors (forbidden.go).
	errors *watchErrors
	cancel context.CancelFunc
	// done is closed when the informer's goroutines have returned.
	done chan struct{}
}

// stop stops the informer and waits until its goroutines (reflector,
// processor, handlers) have returned.
func (r *resourceInformer) stop() {
	r.cancel()
	<-r.done
}

func newMember(ctx context.Context, name, identity string, clients *Clients, federation string,
	resources []schema.GroupVersionResource, metadataOnly map[schema.GroupVersionResource]bool,
	changed func(string, schema.GroupVersionResource, *unstructured.Unstructured)) *member {
	ctx, cancel := context.WithCancel(ctx)
	mem := &member{name: name, identity: identity, clients: clients, selector: federationv1beta1.FederationLabel + "=" + federation,
		changed: changed, informer: map[schema.GroupVersionResource]*resourceInformer{}, cancel: cancel, ctx: ctx, started: time.Now()}
	mem.mu.Lock()
	defer mem.mu.Unlock()
	for _, gvr := range resources {
		mem.informer[gvr] = mem.start(gvr, metadataOnly[gvr])
	}
	return mem
}

// start starts the informer of one resource, until it or the member is
// stopped. Called with m.mu held.
func (m *member) start(gvr schema.GroupVersionResource, metadataOnly bool) *resourceInformer {
	ctx, cancel := context.WithCancel(m.ctx)
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, uidIndex: uidIndexFunc}
	var inf informers.GenericInformer
	if fields, ok := fieldSelectors[gvr]; ok {
		metadataOnly = false
		inf = dynamicinformer.NewFilteredDynamicInformer(m.clients.Dynamic, gvr, metav1.NamespaceAll, 0, indexers,
			func(o *metav1.ListOptions) { o.LabelSelector, o.FieldSelector = m.selector, fields })
	} else if metadataOnly {
		inf = metadatainformer.NewFilteredMetadataInformer(m.clients.Metadata, gvr, metav1.NamespaceAll, 0, indexers,
			func(o *metav1.ListOptions) { o.LabelSelector = m.selector })
	} else {
		inf = dynamicinformer.NewFilteredDynamicInformer(m.clients.Dynamic, gvr, metav1.NamespaceAll, 0, indexers,
			func(o *metav1.ListOptions) { o.LabelSelector = m.selector })
	}
	// Managed fields are large and never read: drop them from the
	// cache. Metadata stays typed, half its size as unstructured:
	// get and list convert it when they hand it out.
	_ = inf.Informer().SetTransform(func(obj any) (any, error) {
		obj, _ = cachetrim.ManagedFields(obj)
		if u, ok := obj.(*unstructured.Unstructured); ok && gvr == PodsResource {
			slimPod(u)
		}
		return obj, nil
	})
	name, changed := m.name, m.changed
	notify := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if u, ok := asUnstructured(gvr, obj); ok {
			changed(name, gvr, u)
		}
	}
	_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: notify, UpdateFunc: func(_, obj any) { notify(obj) }, DeleteFunc: notify,
	})
	errs := &watchErrors{cluster: m.name, gvr: gvr}
	_ = inf.Informer().SetWatchErrorHandlerWithContext(errs.handle)
	r := &resourceInformer{GenericInformer: inf, metadataOnly: metadataOnly, errors: errs, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		inf.Informer().RunWithContext(ctx)
	}()
	return r
}

// ensure starts the informer of a resource watched once the member runs,
// and makes a metadata-only one whole when a handler wants whole objects.
func (m *member) ensure(gvr schema.GroupVersionResource, metadataOnly bool) {
	m.mu.Lock()
	old := m.informer[gvr]
	if m.ctx.Err() != nil || old != nil && (!old.metadataOnly || metadataOnly) {
		m.mu.Unlock()
		return
	}
	m.informer[gvr] = m.start(gvr, metadataOnly)
	m.mu.Unlock()
	if old != nil {
		old.stop()
	}
}

// drop stops the informer of a resource no longer watched and drops its
// cache; it returns once the informer's goroutines have.
func (m *member) drop(gvr schema.GroupVersionResource) {
	m.mu.Lock()
	old := m.informer[gvr]
	delete(m.informer, gvr)
	m.mu.Unlock()
	if old != nil {
		old.stop()
	}
}

// restartUnsynced starts again the informer of a resource that has not
// synced: one waiting for the member to serve the resource retries at
// once, not after its back-off.
func (m *member) restartUnsynced(gvr schema.GroupVersionResource) {
	m.mu.Lock()
	old := m.informer[gvr]
	if old == nil || old.Informer().HasSynced() || m.ctx.Err() != nil {
		m.mu.Unlock()
		return
	}
	m.informer[gvr] = m.start(gvr, old.metadataOnly)
	m.mu.Unlock()
	old.stop()
}

// forbidden reports whether the informer of a resource has not synced
// because the federation may not read the resource there (forbidden.go).
func (m *member) forbidden(gvr schema.GroupVersionResource) bool {
	r := m.resourceInformer(gvr)
	return r != nil && r.errors.forbidden.Load() && !r.Informer().HasSynced()
}

func (m *member) unserved(gvr schema.GroupVersionResource) bool {
	r := m.resourceInformer(gvr)
	return r != nil && r.errors.unserved.Load() && !r.Informer().HasSynced()
}

// resourceInformer returns the informer of a resource, nil when it is not
// watched.
func (m *member) resourceInformer(gvr schema.GroupVersionResource) *resourceInformer {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.informer[gvr]
}

// cacheSizes returns the watched resources with the size of their caches.
func (m *member) cacheSizes() map[schema.GroupVersionResource]int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make(map[schema.GroupVersionResource]int, len(m.informer))
	for gvr, inf := range m.informer {
		out[gvr] = len(inf.Informer().GetStore().ListKeys())
	}
	return out
}

// informerCount counts the member's running informers.
func (m *member) informerCount() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.informer)
}

// asUnstructured returns a cached object as unstructured: metadata-only
// objects become a new object of gvr with only apiVersion and metadata.
func asUnstructured(gvr schema.GroupVersionResource, obj any) (*unstructured.Unstructured, bool) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return o, true
	case *metav1.PartialObjectMetadata:
		meta, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&o.ObjectMeta)
		if err != nil {
			return nil, false
		}
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": meta}}
		u.SetAPIVersion(gvr.GroupVersion().String())
		return u, true
	}
	return nil, false
}

// waitSynced blocks until the namespaces cache has synced, or the member
// is stopped. The other caches are not waited for: a member that lacks an
// API must still receive the other types (see synced).
func (m *member) waitSynced() bool {
	return cache.WaitForCacheSync(m.ctx.Done(), m.resourceInformer(NamespacesResource).Informer().HasSynced)
}

func (m *member) hasSynced() bool {
	return m.resourceInformer(NamespacesResource).Informer().HasSynced()
}

// synced reports whether the cache of one resource has synced.
func (m *member) synced(gvr schema.GroupVersionResource) bool {
	inf := m.resourceInformer(gvr)
	return inf != nil && inf.Informer().HasSynced()
}

func (m *member) get(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool) {
	inf := m.resourceInformer(gvr)
	if inf == nil {
		return nil, false
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	obj, exists, err := inf.Informer().GetStore().GetByKey(key)
	if err != nil || !exists {
		return nil, false
	}
	return asUnstructured(gvr, obj)
}

func (m *member) list(gvr schema.GroupVersionResource, namespace string, selector labels.Selector) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, obj := range m.listMetadata(gvr, namespace, selector) {
		if u, ok := asUnstructured(gvr, obj); ok {
			out = append(out, u)
		}
	}
	return out
}

// listMetadata lists the cached objects as they are.
func (m *member) listMetadata(gvr schema.GroupVersionResource, namespace string, selector labels.Selector) []metav1.Object {
	inf := m.resourceInformer(gvr)
	if inf == nil {
		return nil
	}
	var out []metav1.Object
	_ = cache.ListAllByNamespace(inf.Informer().GetIndexer(), namespace, selector, func(obj any) {
		if o, ok := obj.(metav1.Object); ok {
			out = append(out, o)
		}
	})
	return out
}

// stop stops every informer of the member and returns once their
// goroutines have: nothing of the member runs or is cached after it.
// Never called with the manager's lock held: the informers' handlers
// take it.
func (m *member) stop() {
	m.mu.Lock()
	m.cancel()
	all := make([]*resourceInformer, 0, len(m.informer))
	for _, inf := range m.informer {
		all = append(all, inf)
	}
	streams := m.streams
	m.streams = nil
	m.mu.Unlock()
	for _, inf := range all {
		inf.stop()
	}
	for _, s := range streams {
		s.stop()
	}
}

// PodsResource is watched, when a controller asks for it, only for the
// Pending pods of federated workloads (their template carries the
// federation's label): enough to see pods that cannot be scheduled, while
// memory still grows with federated workloads, not with the members.
var PodsResource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// fieldSelectors narrow the watch of some resources beyond the label.
var fieldSelectors = map[schema.GroupVersionResource]string{PodsResource: "status.phase=Pending"}

// slimPod keeps of a pod only what scheduling questions need.
func slimPod(u *unstructured.Unstructured) {
	nodeName, _, _ := unstructured.NestedString(u.Object, "spec", "nodeName")
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	u.SetAnnotations(nil)
	u.Object["spec"] = map[string]any{"nodeName": nodeName}
	u.Object["status"] = map[string]any{"phase": phase, "conditions": conditions}
}
