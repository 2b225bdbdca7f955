// Package testmembers holds fake member clusters for the propagation
// rooms' unit tests: fake dynamic clients that echo writes as a member
// stores them, and hand-filled caches. Tests only.
package testmembers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/memberrbac"
)

// FieldManager is the field manager the fakes file applied fields under:
// the controller manager's.
const FieldManager = "federation-controller-manager"

// EndpointSlices are what List serves (Slices).
var EndpointSlices = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}

// Members are member clusters with fake clients and hand-filled caches.
type Members struct {
	// Mu guards Cache: the controller's workers write to it through the
	// fake clients.
	Mu sync.Mutex
	// Ready are the usable clusters, All every joined one.
	Ready, All []*federationv1beta1.Cluster
	// Cache is the members' caches of our copies, by cluster then key.
	Cache   map[string]map[string]*unstructured.Unstructured
	Clients map[string]*dynamicfake.FakeDynamicClient
	// Unsynced clusters' caches of the type have not synced.
	Unsynced []string
	// ForbiddenIn clusters refuse the federation reading the type (their
	// caches stay unsynced too: list them in Unsynced).
	ForbiddenIn []string
	// UnservedIn clusters do not serve the type (list them in Unsynced).
	UnservedIn []string
	// Unsettled: a Ready cluster's caches are still starting (Settled).
	Unsettled bool
	// Slices are the members' cached EndpointSlices.
	Slices map[string][]*unstructured.Unstructured
	// InNamespace are the objects NamespaceObjects lists, by cluster.
	InNamespace map[string][]membercluster.Object
	// ForeignNamespaces (cluster/name) are the member's own namespaces:
	// not in our cache; read live, the fake client has them or not.
	ForeignNamespaces []string
}

// New makes members: usable ones, and those down (joined, not Ready).
func New(usable []string, down ...string) *Members {
	m := &Members{Cache: map[string]map[string]*unstructured.Unstructured{}, Clients: map[string]*dynamicfake.FakeDynamicClient{}}
	for _, name := range append(slices.Clone(usable), down...) {
		c := &federationv1beta1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
		m.All = append(m.All, c)
		if slices.Contains(usable, name) {
			m.Ready = append(m.Ready, c)
		}
		m.Cache[name] = map[string]*unstructured.Unstructured{}
		client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), memberListKinds)
		// Server-side apply: echo the applied object as the member stored it.
		client.PrependReactor("patch", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
			p := a.(clienttesting.PatchAction)
			if p.GetPatchType() != types.ApplyPatchType {
				return true, &unstructured.Unstructured{Object: map[string]any{}}, nil
			}
			obj := &unstructured.Unstructured{}
			if err := json.Unmarshal(p.GetPatch(), &obj.Object); err != nil {
				return true, nil, err
			}
			obj.SetGeneration(1)
			obj.SetResourceVersion("1")
			// Managed fields as the member keeps them: those of what was
			// there before, then ours.
			managed := []metav1.ManagedFieldsEntry{}
			if before, err := client.Tracker().Get(p.GetResource(), p.GetNamespace(), p.GetName()); err == nil {
				if m, err := meta.Accessor(before); err == nil {
					managed = m.GetManagedFields()
				}
			}
			obj.SetManagedFields(append(managed, metav1.ManagedFieldsEntry{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply}))
			// The member's watch brings it to the cache.
			m.Put(name, obj)
			return true, obj, nil
		})
		// Create: the member's own objects (in the tracker) are there
		// already; else the object is echoed as the member stored it.
		client.PrependReactor("create", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
			c := a.(clienttesting.CreateAction)
			obj := c.GetObject().(*unstructured.Unstructured).DeepCopy()
			if _, err := client.Tracker().Get(c.GetResource(), c.GetNamespace(), obj.GetName()); err == nil {
				return true, nil, apierrors.NewAlreadyExists(c.GetResource().GroupResource(), obj.GetName())
			}
			obj.SetGeneration(1)
			obj.SetResourceVersion("1")
			obj.SetUID(types.UID("uid-" + obj.GetName()))
			m.Put(name, obj)
			return true, obj, nil
		})
		m.Clients[name] = client
	}
	return m
}

// Create goes through the member's fake dynamic client, as Apply.
func (m *Members) Create(ctx context.Context, cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, fieldManager string) (*metav1.PartialObjectMetadata, error) {
	client, err := m.Client(cluster)
	if err != nil {
		return nil, err
	}
	out, err := client.Resource(gvr).Namespace(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil {
		return nil, err
	}
	return asMetadata(out)
}

func (m *Members) NamespaceObjects(_ context.Context, cluster, ns string) ([]membercluster.Object, error) {
	var out []membercluster.Object
	for _, o := range m.InNamespace[cluster] {
		if o.Namespace == ns {
			out = append(out, o)
		}
	}
	return out, nil
}

// memberListKinds are the resources the fake members can list live.
var memberListKinds = map[schema.GroupVersionResource]string{
	{Version: "v1", Resource: "secrets"}:                "SecretList",
	{Version: "v1", Resource: "configmaps"}:             "ConfigMapList",
	{Version: "v1", Resource: "services"}:               "ServiceList",
	{Version: "v1", Resource: "persistentvolumeclaims"}: "PersistentVolumeClaimList",
}

// ListLive lists the member's objects as the member holds them (its
// client's tracker), as metadata.
func (m *Members) ListLive(ctx context.Context, cluster string, gvr schema.GroupVersionResource, ns, selector string) ([]metav1.PartialObjectMetadata, error) {
	list, err := m.Clients[cluster].Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	out := make([]metav1.PartialObjectMetadata, 0, len(list.Items))
	for i := range list.Items {
		meta, err := asMetadata(&list.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *meta)
	}
	return out, nil
}

func asMetadata(u *unstructured.Unstructured) (*metav1.PartialObjectMetadata, error) {
	meta := &metav1.PartialObjectMetadata{}
	raw, _, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata")
	if raw, ok := raw.(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &meta.ObjectMeta); err != nil {
			return nil, err
		}
	}
	return meta, nil
}

func (m *Members) Put(cluster string, obj *unstructured.Unstructured) {
	m.Mu.Lock()
	defer m.Mu.Unlock()
	m.Cache[cluster][fedobject.Key(obj.GetNamespace(), obj.GetName())] = obj
}

func (m *Members) Federation() string                                               { return "fed" }
func (m *Members) FederationUID() string                                            { return "fed-uid" }
func (m *Members) Watch(schema.GroupVersionResource, membercluster.Handler)         {}
func (m *Members) WatchMetadata(schema.GroupVersionResource, membercluster.Handler) {}
func (m *Members) Clusters() []*federationv1beta1.Cluster                           { return m.Ready }
func (m *Members) AllClusters() ([]*federationv1beta1.Cluster, error)               { return m.All, nil }
func (m *Members) Settled() bool                                                    { return !m.Unsettled }
func (m *Members) Usable(cluster string) bool {
	return slices.ContainsFunc(m.Ready, func(c *federationv1beta1.Cluster) bool { return c.Name == cluster })
}
func (m *Members) Get(cluster string, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, bool) {
	m.Mu.Lock()
	defer m.Mu.Unlock()
	o, ok := m.Cache[cluster][fedobject.Key(ns, name)]
	if gvr == membercluster.NamespacesResource && !ok {
		// Every namespace is there, created by the federation, but those
		// the test made the member's own (a Namespace copy put there aside).
		if slices.Contains(m.ForeignNamespaces, cluster+"/"+name) {
			return nil, false
		}
		ns := &unstructured.Unstructured{}
		ns.SetLabels(map[string]string{memberrbac.CreatedByLabel: "fed"})
		return ns, true
	}
	return o, ok
}
func (m *Members) List(cluster string, gvr schema.GroupVersionResource, ns string, sel labels.Selector) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range m.Slices[cluster] {
		if gvr == EndpointSlices && o.GetNamespace() == ns && sel.Matches(labels.Set(o.GetLabels())) {
			out = append(out, o)
		}
	}
	return out
}
func (m *Members) ListMetadata(cluster string, gvr schema.GroupVersionResource, ns string, sel labels.Selector) []metav1.Object {
	return asObjects(m.List(cluster, gvr, ns, sel))
}

func asObjects(objs []*unstructured.Unstructured) []metav1.Object {
	var out []metav1.Object
	for _, o := range objs {
		out = append(out, o)
	}
	return out
}
func (m *Members) Synced(cluster string, _ schema.GroupVersionResource) bool {
	return !slices.Contains(m.Unsynced, cluster)
}
func (m *Members) Unserved(cluster string, _ schema.GroupVersionResource) bool {
	return slices.Contains(m.UnservedIn, cluster)
}
func (m *Members) Forbidden(cluster string, _ schema.GroupVersionResource) bool {
	return slices.Contains(m.ForbiddenIn, cluster)
}
func (m *Members) Client(cluster string) (dynamic.Interface, error) {
	if !slices.ContainsFunc(m.Ready, func(c *federationv1beta1.Cluster) bool { return c.Name == cluster }) {
		return nil, fmt.Errorf("cluster %s is not Ready", cluster)
	}
	return m.Clients[cluster], nil
}

// Apply goes through the member's fake dynamic client, whose reactor answers
// it, and returns the metadata of the answer as the real member does.
func (m *Members) Apply(ctx context.Context, cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, fieldManager string) (*metav1.PartialObjectMetadata, error) {
	client, err := m.Client(cluster)
	if err != nil {
		return nil, err
	}
	out, err := client.Resource(gvr).Namespace(obj.GetNamespace()).Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		return nil, err
	}
	return asMetadata(out)
}

// Actions lists "verb" or "verb:patchtype" of a member's calls.
func (m *Members) Actions(cluster string) []string {
	var out []string
	for _, a := range m.Clients[cluster].Actions() {
		verb := a.GetVerb()
		if p, ok := a.(clienttesting.PatchAction); ok {
			verb += ":" + string(p.GetPatchType())
		}
		out = append(out, verb)
	}
	return out
}

// GetLive reads an object as the member holds it (its client's tracker).
func (m *Members) GetLive(ctx context.Context, cluster string, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	client, err := m.Client(cluster)
	if err != nil {
		return nil, err
	}
	return client.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
}
