package customresources

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/cachetrim"
	"github.com/federation-v1/federation/pkg/controllers/propagation"
	"github.com/federation-v1/federation/pkg/membercluster"
)

// Manager is what memberCaches needs of the member manager besides what
// the propagation controller does: adding a handler at run time.
type Manager interface {
	propagation.Members
}

// memberCaches gives one custom resource's propagation controller the
// members' caches of its resource, which the member manager cannot add
// once it runs: a label-filtered informer per usable cluster, started when
// the cluster becomes usable (or the CRD appears there) and stopped when
// it goes or the controller stops. Everything else is the manager's.
type memberCaches struct {
	Manager
	gvr schema.GroupVersionResource
	// crd is the CRD's name: its copy appearing in a member restarts an
	// informer still waiting for the resource to be served there.
	crd string

	mu sync.Mutex
	// ctx ends when the controller stops; nil before start.
	ctx     context.Context
	handler membercluster.Handler
	caches  map[string]*clusterCache
}

// clusterCache is one member's informer of the resource.
type clusterCache struct {
	client   dynamic.Interface
	informer cache.SharedIndexInformer
	cancel   context.CancelFunc
}

func newMemberCaches(m Manager, gvr schema.GroupVersionResource, crd string) *memberCaches {
	return &memberCaches{Manager: m, gvr: gvr, crd: crd, caches: map[string]*clusterCache{}}
}

// Watch takes the propagation controller's handler of the resource.
func (c *memberCaches) Watch(gvr schema.GroupVersionResource, h membercluster.Handler) {
	if gvr != c.gvr {
		c.Manager.Watch(gvr, h)
		return
	}
	c.mu.Lock()
	c.handler = h
	c.mu.Unlock()
}

// WatchMetadata is Watch: custom resources are cached whole.
func (c *memberCaches) WatchMetadata(gvr schema.GroupVersionResource, h membercluster.Handler) {
	c.Watch(gvr, h)
}

// start starts the caches of the usable clusters until ctx ends. The
// manager tells c of clusters and of namespaces and CRDs in members (a
// handler it keeps after ctx ends, which then does nothing).
func (c *memberCaches) start(ctx context.Context) {
	c.mu.Lock()
	c.ctx = ctx
	c.mu.Unlock()
	c.Manager.WatchMetadata(membercluster.NamespacesResource, c)
	c.Manager.WatchMetadata(CRDResource, c)
	c.refresh()
	go func() {
		<-ctx.Done()
		c.mu.Lock()
		defer c.mu.Unlock()
		for name, cc := range c.caches {
			cc.cancel()
			delete(c.caches, name)
		}
	}()
}

// running returns the handler while the controller runs.
func (c *memberCaches) running() membercluster.Handler {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil || c.ctx.Err() != nil {
		return nil
	}
	return c.handler
}

// MemberChanged passes namespace events on, and restarts a cluster's
// informer that has not synced when the CRD's copy shows up there.
func (c *memberCaches) MemberChanged(cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	h := c.running()
	if h == nil {
		return
	}
	switch gvr {
	case membercluster.NamespacesResource:
		h.MemberChanged(cluster, gvr, obj)
	case CRDResource:
		if obj.GetName() == c.crd {
			c.restartUnsynced(cluster)
		}
	}
}

// ClustersChanged starts and stops caches, then tells the controller.
func (c *memberCaches) ClustersChanged() {
	h := c.running()
	if h == nil {
		return
	}
	c.refresh()
	h.ClustersChanged()
}

// refresh makes the caches follow the usable clusters and their clients.
func (c *memberCaches) refresh() {
	usable := map[string]dynamic.Interface{}
	for _, cl := range c.Clusters() {
		if client, err := c.Client(cl.Name); err == nil {
			usable[cl.Name] = client
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil || c.ctx.Err() != nil {
		return
	}
	for name, cc := range c.caches {
		if client, ok := usable[name]; !ok || client != cc.client {
			cc.cancel()
			delete(c.caches, name)
		}
	}
	for name, client := range usable {
		if c.caches[name] == nil {
			c.caches[name] = c.startCache(name, client)
		}
	}
}

func (c *memberCaches) restartUnsynced(cluster string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cc := c.caches[cluster]
	if cc == nil || cc.informer.HasSynced() || c.ctx.Err() != nil {
		return
	}
	cc.cancel()
	c.caches[cluster] = c.startCache(cluster, cc.client)
}

// startCache starts one cluster's informer of the objects labelled with
// the federation's name. Called with c.mu held.
func (c *memberCaches) startCache(cluster string, client dynamic.Interface) *clusterCache {
	ctx, cancel := context.WithCancel(c.ctx)
	selector := federationv1beta1.FederationLabel + "=" + c.Federation()
	informer := dynamicinformer.NewFilteredDynamicInformer(client, c.gvr, metav1.NamespaceAll, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		func(o *metav1.ListOptions) { o.LabelSelector = selector }).Informer()
	_ = informer.SetTransform(cachetrim.ManagedFields)
	notify := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		u, ok := obj.(*unstructured.Unstructured)
		if h := c.running(); ok && h != nil {
			h.MemberChanged(cluster, c.gvr, u)
		}
	}
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: notify, UpdateFunc: func(_, obj any) { notify(obj) }, DeleteFunc: notify,
	})
	go informer.RunWithContext(ctx)
	return &clusterCache{client: client, informer: informer, cancel: cancel}
}

func (c *memberCaches) cache(cluster string) cache.SharedIndexInformer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cc := c.caches[cluster]; cc != nil {
		return cc.informer
	}
	return nil
}

// Get returns a member's labelled copy from the caches of the resource.
func (c *memberCaches) Get(cluster string, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool) {
	if gvr != c.gvr {
		return c.Manager.Get(cluster, gvr, namespace, name)
	}
	inf := c.cache(cluster)
	if inf == nil {
		return nil, false
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	obj, exists, err := inf.GetStore().GetByKey(key)
	if err != nil || !exists {
		return nil, false
	}
	u, ok := obj.(*unstructured.Unstructured)
	return u, ok
}

// List lists a member's labelled copies from the caches of the resource.
func (c *memberCaches) List(cluster string, gvr schema.GroupVersionResource, namespace string, selector labels.Selector) []*unstructured.Unstructured {
	if gvr != c.gvr {
		return c.Manager.List(cluster, gvr, namespace, selector)
	}
	inf := c.cache(cluster)
	if inf == nil {
		return nil
	}
	var out []*unstructured.Unstructured
	_ = cache.ListAllByNamespace(inf.GetIndexer(), namespace, selector, func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	})
	return out
}

// ListMetadata lists the same copies as List: they are cached whole.
func (c *memberCaches) ListMetadata(cluster string, gvr schema.GroupVersionResource, namespace string, selector labels.Selector) []metav1.Object {
	if gvr != c.gvr {
		return c.Manager.ListMetadata(cluster, gvr, namespace, selector)
	}
	var out []metav1.Object
	for _, u := range c.List(cluster, gvr, namespace, selector) {
		out = append(out, u)
	}
	return out
}

// Synced reports whether a member's cache of the resource has synced.
func (c *memberCaches) Synced(cluster string, gvr schema.GroupVersionResource) bool {
	if gvr != c.gvr {
		return c.Manager.Synced(cluster, gvr)
	}
	inf := c.cache(cluster)
	return inf != nil && inf.HasSynced()
}
