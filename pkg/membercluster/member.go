package membercluster

import (
	"context"

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
// objects the federation labelled.
type member struct {
	name     string
	identity string
	clients  *Clients
	factory  dynamicinformer.DynamicSharedInformerFactory
	metadata metadatainformer.SharedInformerFactory
	informer map[schema.GroupVersionResource]informers.GenericInformer
	cancel   context.CancelFunc
	ctx      context.Context
}

func newMember(ctx context.Context, name, identity string, clients *Clients, federation string,
	resources []schema.GroupVersionResource, metadataOnly map[schema.GroupVersionResource]bool,
	changed func(string, schema.GroupVersionResource, *unstructured.Unstructured)) *member {
	ctx, cancel := context.WithCancel(ctx)
	selector := federationv1beta1.FederationLabel + "=" + federation
	labelled := func(o *metav1.ListOptions) { o.LabelSelector = selector }
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(clients.Dynamic, 0, metav1.NamespaceAll, labelled)
	metaFactory := metadatainformer.NewFilteredSharedInformerFactory(clients.Metadata, 0, metav1.NamespaceAll, labelled)
	mem := &member{name: name, identity: identity, clients: clients, factory: factory, metadata: metaFactory,
		informer: map[schema.GroupVersionResource]informers.GenericInformer{}, cancel: cancel, ctx: ctx}
	for _, gvr := range resources {
		var inf informers.GenericInformer
		if fields, ok := fieldSelectors[gvr]; ok {
			inf = dynamicinformer.NewFilteredDynamicInformer(clients.Dynamic, gvr, metav1.NamespaceAll, 0,
				cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
				func(o *metav1.ListOptions) { o.LabelSelector, o.FieldSelector = selector, fields })
			go inf.Informer().RunWithContext(ctx)
		} else if metadataOnly[gvr] {
			inf = metaFactory.ForResource(gvr)
		} else {
			inf = factory.ForResource(gvr)
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
		mem.informer[gvr] = inf
	}
	factory.Start(ctx.Done())
	metaFactory.Start(ctx.Done())
	return mem
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
	return cache.WaitForCacheSync(m.ctx.Done(), m.informer[NamespacesResource].Informer().HasSynced)
}

func (m *member) hasSynced() bool {
	return m.informer[NamespacesResource].Informer().HasSynced()
}

// synced reports whether the cache of one resource has synced.
func (m *member) synced(gvr schema.GroupVersionResource) bool {
	inf, ok := m.informer[gvr]
	return ok && inf.Informer().HasSynced()
}

func (m *member) get(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool) {
	inf, ok := m.informer[gvr]
	if !ok {
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
	inf, ok := m.informer[gvr]
	if !ok {
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

func (m *member) stop() {
	m.cancel()
	go m.factory.Shutdown()
	go m.metadata.Shutdown()
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
