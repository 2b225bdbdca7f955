package membercluster

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// uidIndex indexes every member cache by UID: an event or an owner
// reference names its object by UID, and the caches answer without a call
// to the member.
const uidIndex = "uid"

func uidIndexFunc(obj any) ([]string, error) {
	o, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	return []string{string(o.GetUID())}, nil
}

// ByUID returns the labelled object of that UID in a member's caches and
// its resource, whatever its type. The object is the cache's own: never
// modify it.
func (m *Manager) ByUID(cluster string, uid types.UID) (schema.GroupVersionResource, metav1.Object, bool) {
	mem := m.member(cluster)
	if mem == nil || uid == "" {
		return schema.GroupVersionResource{}, nil, false
	}
	mem.mu.RLock()
	defer mem.mu.RUnlock()
	for gvr, inf := range mem.informer {
		objs, err := inf.Informer().GetIndexer().ByIndex(uidIndex, string(uid))
		if err != nil || len(objs) == 0 {
			continue
		}
		if o, ok := objs[0].(metav1.Object); ok {
			return gvr, o, true
		}
	}
	return schema.GroupVersionResource{}, nil, false
}

// HasObjectsIn reports whether a member's caches hold a labelled object
// in namespace: where they hold none, nothing there is the federation's.
func (m *Manager) HasObjectsIn(cluster, namespace string) bool {
	mem := m.member(cluster)
	if mem == nil || namespace == "" {
		return false
	}
	mem.mu.RLock()
	defer mem.mu.RUnlock()
	for gvr, inf := range mem.informer {
		if gvr == NamespacesResource {
			continue
		}
		if keys, err := inf.Informer().GetIndexer().IndexKeys(cache.NamespaceIndex, namespace); err == nil && len(keys) > 0 {
			return true
		}
	}
	return false
}

// GetMetadata reads the metadata of one object from the member itself (not
// a cache), as protobuf: for objects the label-filtered caches do not hold,
// such as the ReplicaSets and Pods a copy made. ctx bounds the call; the
// caller's error names the cluster. A NotFound stays one (wrapped).
func (m *Manager) GetMetadata(ctx context.Context, cluster string, gvr schema.GroupVersionResource, namespace, name string) (*metav1.PartialObjectMetadata, error) {
	clients, err := m.clients(cluster)
	if err != nil {
		return nil, err
	}
	obj, err := clients.Metadata.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading %s %s/%s: %w", gvr.Resource, namespace, name, err)
	}
	return obj, nil
}

// CachesSynced reports whether every cache of a usable member has synced,
// or has had settleTimeout to (a member that lacks an API never syncs its
// cache): until then, that a UID is not in them proves nothing.
func (m *Manager) CachesSynced(cluster string) bool {
	mem := m.member(cluster)
	if mem == nil {
		return false
	}
	if time.Since(mem.started) > settleTimeout {
		return true
	}
	mem.mu.RLock()
	defer mem.mu.RUnlock()
	for _, inf := range mem.informer {
		if !inf.Informer().HasSynced() {
			return false
		}
	}
	return true
}
