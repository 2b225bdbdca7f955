package propagation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/memberrbac"
)

// fakeMembers are member clusters with fake clients and hand-filled caches.
type fakeMembers struct {
	// mu guards cache: the controller's workers write to it through the
	// fake clients.
	mu      stdsync.Mutex
	usable  []*federationv1beta1.Cluster
	all     []*federationv1beta1.Cluster
	cache   map[string]map[string]*unstructured.Unstructured
	clients map[string]*dynamicfake.FakeDynamicClient
	// unsynced clusters' caches of the type have not synced.
	unsynced []string
	// slices are the members' cached EndpointSlices.
	slices map[string][]*unstructured.Unstructured
	// inNamespace are the objects NamespaceObjects lists, by cluster.
	inNamespace map[string][]membercluster.Object
	// foreignNamespaces (cluster/name) are the member's own namespaces:
	// not in our cache; read live, the fake client has them or not.
	foreignNamespaces []string
}

func newFakeMembers(usable []string, down ...string) *fakeMembers {
	m := &fakeMembers{cache: map[string]map[string]*unstructured.Unstructured{}, clients: map[string]*dynamicfake.FakeDynamicClient{}}
	for _, name := range append(slices.Clone(usable), down...) {
		c := &federationv1beta1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
		m.all = append(m.all, c)
		if slices.Contains(usable, name) {
			m.usable = append(m.usable, c)
		}
		m.cache[name] = map[string]*unstructured.Unstructured{}
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
			m.put(name, obj)
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
			m.put(name, obj)
			return true, obj, nil
		})
		m.clients[name] = client
	}
	return m
}

// Create goes through the member's fake dynamic client, as Apply.
func (m *fakeMembers) Create(ctx context.Context, cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, fieldManager string) (*metav1.PartialObjectMetadata, error) {
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

func (m *fakeMembers) NamespaceObjects(_ context.Context, cluster, ns string) ([]membercluster.Object, error) {
	var out []membercluster.Object
	for _, o := range m.inNamespace[cluster] {
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
func (m *fakeMembers) ListLive(ctx context.Context, cluster string, gvr schema.GroupVersionResource, ns, selector string) ([]metav1.PartialObjectMetadata, error) {
	list, err := m.clients[cluster].Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
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

func (m *fakeMembers) put(cluster string, obj *unstructured.Unstructured) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cache[cluster][key(obj.GetNamespace(), obj.GetName())] = obj
}

func (m *fakeMembers) Federation() string                                               { return "fed" }
func (m *fakeMembers) FederationUID() string                                            { return "fed-uid" }
func (m *fakeMembers) Watch(schema.GroupVersionResource, membercluster.Handler)         {}
func (m *fakeMembers) WatchMetadata(schema.GroupVersionResource, membercluster.Handler) {}
func (m *fakeMembers) Clusters() []*federationv1beta1.Cluster                           { return m.usable }
func (m *fakeMembers) AllClusters() ([]*federationv1beta1.Cluster, error)               { return m.all, nil }
func (m *fakeMembers) Usable(cluster string) bool {
	return slices.ContainsFunc(m.usable, func(c *federationv1beta1.Cluster) bool { return c.Name == cluster })
}
func (m *fakeMembers) Get(cluster string, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.cache[cluster][key(ns, name)]
	if gvr == membercluster.NamespacesResource && !ok {
		// Every namespace is there, created by the federation, but those
		// the test made the member's own (a Namespace copy put there aside).
		if slices.Contains(m.foreignNamespaces, cluster+"/"+name) {
			return nil, false
		}
		ns := &unstructured.Unstructured{}
		ns.SetLabels(map[string]string{memberrbac.CreatedByLabel: "fed"})
		return ns, true
	}
	return o, ok
}
func (m *fakeMembers) List(cluster string, gvr schema.GroupVersionResource, ns string, sel labels.Selector) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range m.slices[cluster] {
		if gvr == endpointSlices && o.GetNamespace() == ns && sel.Matches(labels.Set(o.GetLabels())) {
			out = append(out, o)
		}
	}
	return out
}
func (m *fakeMembers) ListMetadata(cluster string, gvr schema.GroupVersionResource, ns string, sel labels.Selector) []metav1.Object {
	return asObjects(m.List(cluster, gvr, ns, sel))
}

func asObjects(objs []*unstructured.Unstructured) []metav1.Object {
	var out []metav1.Object
	for _, o := range objs {
		out = append(out, o)
	}
	return out
}
func (m *fakeMembers) Synced(cluster string, _ schema.GroupVersionResource) bool {
	return !slices.Contains(m.unsynced, cluster)
}
func (m *fakeMembers) Client(cluster string) (dynamic.Interface, error) {
	if !slices.ContainsFunc(m.usable, func(c *federationv1beta1.Cluster) bool { return c.Name == cluster }) {
		return nil, fmt.Errorf("cluster %s is not Ready", cluster)
	}
	return m.clients[cluster], nil
}

// Apply goes through the member's fake dynamic client, whose reactor answers
// it, and returns the metadata of the answer as the real member does.
func (m *fakeMembers) Apply(ctx context.Context, cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, fieldManager string) (*metav1.PartialObjectMetadata, error) {
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

// memberActions lists "verb" or "verb:patchtype" of a member's calls.
func (m *fakeMembers) memberActions(cluster string) []string {
	var out []string
	for _, a := range m.clients[cluster].Actions() {
		verb := a.GetVerb()
		if p, ok := a.(clienttesting.PatchAction); ok {
			verb += ":" + string(p.GetPatchType())
		}
		out = append(out, verb)
	}
	return out
}

type testController struct {
	*Controller
	fedClient *dynamicfake.FakeDynamicClient
	members   *fakeMembers
	recorder  *record.FakeRecorder
	indexer   cache.Indexer
}

func newTestController(t *testing.T, a *federatedtypes.Type, members *fakeMembers, fed ...*unstructured.Unstructured) *testController {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	var objs []runtime.Object
	for _, o := range fed {
		require.NoError(t, indexer.Add(o))
		objs = append(objs, o)
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{a.Resource: a.Kind + "List"}, objs...)
	recorder := record.NewFakeRecorder(100)
	c := newController(a, client, cache.NewGenericLister(indexer, a.Resource.GroupResource()), members, recorder,
		Options{Workers: 1, MemberTimeout: time.Second, DeletionWait: time.Minute})
	t.Cleanup(c.queue.ShutDown)
	return &testController{Controller: c, fedClient: client, members: members, recorder: recorder, indexer: indexer}
}

// sync runs the controller on key as its workers would, until its queues
// are empty: the object's reconcile, the member writes it hands over, and
// the reconciles those bring back (a failed write is not retried here).
// It returns every error on the way.
func (tc *testController) sync(t *testing.T, key string) error {
	t.Helper()
	ctx := context.Background()
	var errs []error
	next := []string{key}
	for round := 0; len(next) > 0; round++ {
		require.Less(t, round, 10, "the controller keeps requeueing %v", next)
		for _, k := range next {
			errs = append(errs, tc.Sync(ctx, k))
		}
		for _, cluster := range tc.writes.Clusters() {
			errs = append(errs, tc.writes.Drain(ctx, cluster)...)
		}
		next = nil
		for tc.queue.Len() > 0 {
			k, _ := tc.queue.Get()
			tc.queue.Done(k)
			next = append(next, k)
		}
	}
	return errors.Join(errs...)
}

func (tc *testController) events() []string {
	var out []string
	for {
		select {
		case e := <-tc.recorder.Events:
			out = append(out, e)
		default:
			sort.Strings(out)
			return out
		}
	}
}

func configMapObj(name string, finalizers ...string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "v"}}}
	o.SetName(name)
	o.SetNamespace("ns")
	o.SetFinalizers(finalizers)
	return o
}

// applied returns what the member would hold after our apply.
func appliedCopy(t *testing.T, fed *unstructured.Unstructured) *unstructured.Unstructured {
	d, _, err := plan.Desired(federatedtypes.ByName("configmaps"), fed, "fed", "fed-uid")
	require.NoError(t, err)
	d.SetResourceVersion("1")
	return d
}

func TestSyncCreatesEverywhere(t *testing.T) {
	members := newFakeMembers([]string{"c1", "c2"})
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a"))
	require.NoError(t, tc.sync(t, "ns/a"))
	for _, c := range []string{"c1", "c2"} {
		assert.Equal(t, []string{"create"}, members.memberActions(c), c)
	}
	assert.Empty(t, tc.fedClient.Actions(), "no finalizer: its deletion is recorded in a tombstone")
	assert.Equal(t, []string{"Normal CreateInCluster Created ConfigMap ns/a in clusters c1, c2"}, tc.events(), "one event for the object")
}

func TestSyncAddsTheFinalizerToANamespace(t *testing.T) {
	members := newFakeMembers([]string{"c1"})
	tc := newTestController(t, federatedtypes.ByName("namespaces"), members, fedNamespace("team"))
	require.NoError(t, tc.Sync(context.Background(), "team"))
	fed, err := tc.fedClient.Resource(federatedtypes.Namespaces.Resource).Get(context.Background(), "team", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Contains(t, fed.GetFinalizers(), Finalizer)
}

func TestSyncAtRestWritesNothing(t *testing.T) {
	fed := configMapObj("a", Finalizer)
	members := newFakeMembers([]string{"c1", "c2"})
	members.put("c1", appliedCopy(t, fed))
	members.put("c2", appliedCopy(t, fed))
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
	for range 3 {
		require.NoError(t, tc.sync(t, "ns/a"))
	}
	assert.Empty(t, members.memberActions("c1"))
	assert.Empty(t, members.memberActions("c2"))
	assert.Empty(t, tc.fedClient.Actions(), "no finalizer or status write")
	assert.Empty(t, tc.events())
}

func TestSyncRestoresDrift(t *testing.T) {
	fed := configMapObj("a", Finalizer)
	members := newFakeMembers([]string{"c1", "c2"})
	members.put("c1", appliedCopy(t, fed))
	members.put("c2", appliedCopy(t, fed))
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
	require.NoError(t, tc.sync(t, "ns/a"))

	// By hand: c1's data edited (a new resourceVersion), c2's copy deleted.
	edited := appliedCopy(t, fed)
	edited.SetResourceVersion("2")
	edited.Object["data"] = map[string]any{"k": "hand"}
	members.put("c1", edited)
	delete(members.cache["c2"], "ns/a")
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"patch:" + string(types.ApplyPatchType)}, members.memberActions("c1"))
	assert.Equal(t, []string{"get", "create"}, members.memberActions("c2"))
	assert.Equal(t, []string{
		"Normal CreateInCluster Recreated ConfigMap ns/a in cluster c2: it was deleted there",
		"Normal UpdateInCluster Restored ConfigMap ns/a in cluster c1: it was changed there",
	}, tc.events())
}

func TestSyncWithAStaleCacheLooksAgainSoon(t *testing.T) {
	members := newFakeMembers([]string{"c1"})
	tc := newTestController(t, federatedtypes.Namespaces, members, fedNamespace("a"))
	tc.fedClient.PrependReactor("update", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(federatedtypes.Namespaces.Resource.GroupResource(), "a", fmt.Errorf("the object has been modified"))
	})
	require.NoError(t, tc.sync(t, "a"), "a conflict is not an error")
	assert.Empty(t, members.memberActions("c1"), "nothing written from the stale copy")
	require.Eventually(t, func() bool { return tc.queue.Len() == 1 }, 5*time.Second, 10*time.Millisecond, "requeued")
}

func TestSyncReadsFirstWhereTheCacheHasNotSynced(t *testing.T) {
	members := newFakeMembers([]string{"c1", "c2"})
	members.unsynced = []string{"c1"}
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a", Finalizer))
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"get", "create"}, members.memberActions("c1"), "absence from an unsynced cache proves nothing")
	assert.Equal(t, []string{"create"}, members.memberActions("c2"), "a synced cache without the object: one call")
}

func TestSyncDeletesWhereNoLongerSelected(t *testing.T) {
	fed := configMapObj("a", Finalizer)
	fed.SetAnnotations(map[string]string{"federation.alpha.kubernetes.io/cluster-selector": `[{"key":"cluster","operator":"==","values":["1"]}]`})
	members := newFakeMembers([]string{"c1", "c2"})
	members.usable[0].Labels = map[string]string{"cluster": "1"}
	members.usable[1].Labels = map[string]string{"cluster": "2"}
	members.put("c2", appliedCopy(t, configMapObj("a")))
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"create"}, members.memberActions("c1"))
	assert.Equal(t, []string{"delete"}, members.memberActions("c2"))
}

func TestSyncOneFailingClusterDoesNotStopTheOthers(t *testing.T) {
	members := newFakeMembers([]string{"c1", "c2"})
	members.clients["c1"].PrependReactor("create", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewBadRequest("the server could not find the requested resource")
	})
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a", Finalizer))
	err := tc.sync(t, "ns/a")
	require.ErrorContains(t, err, "creating ConfigMap ns/a in cluster c1")
	assert.Equal(t, []string{"create"}, members.memberActions("c2"))
	events := tc.events()
	require.Len(t, events, 2)
	assert.True(t, strings.HasPrefix(events[0], "Normal CreateInCluster Created ConfigMap ns/a in cluster c2"), events[0])
	assert.True(t, strings.HasPrefix(events[1], "Warning CreateInClusterFailed Creating ConfigMap ns/a in cluster c1 failed"), events[1])
}

func deleting(o *unstructured.Unstructured, since time.Duration) *unstructured.Unstructured {
	ts := metav1.NewTime(time.Now().Add(-since))
	o.SetDeletionTimestamp(&ts)
	return o
}

func TestDeletion(t *testing.T) {
	for _, tt := range []struct {
		name        string
		fed         *unstructured.Unstructured
		down        []string
		unsynced    []string
		wantMember  []string
		wantRelease bool
		wantEvents  []string
	}{
		{
			name:        "cascading: member copies deleted",
			fed:         deleting(configMapObj("a", Finalizer), 0),
			wantMember:  []string{"delete"},
			wantRelease: true,
			wantEvents:  []string{"Normal DeleteInCluster Deleted ConfigMap ns/a in cluster c1"},
		},
		{
			name:        "orphan: copies kept, our label removed",
			fed:         deleting(configMapObj("a", Finalizer, metav1.FinalizerOrphanDependents), 0),
			down:        []string{"c9"},
			wantMember:  []string{"patch:" + string(types.MergePatchType)},
			wantRelease: true,
		},
		{
			name:       "a selected cluster is down: wait",
			fed:        deleting(configMapObj("a", Finalizer), 0),
			down:       []string{"c9"},
			wantMember: []string{"delete"},
			wantEvents: []string{"Normal DeleteInCluster Deleted ConfigMap ns/a in cluster c1"},
		},
		{
			name:       "a cluster whose cache has not synced yet: wait",
			fed:        deleting(configMapObj("a", Finalizer), 0),
			unsynced:   []string{"c1"},
			wantMember: nil,
		},
		{
			name:        "a selected cluster is down for too long: give up with an event",
			fed:         deleting(configMapObj("a", Finalizer), 2*time.Minute),
			down:        []string{"c9"},
			wantMember:  []string{"delete"},
			wantRelease: true,
			wantEvents: []string{
				"Normal DeleteInCluster Deleted ConfigMap ns/a in cluster c1",
				"Warning DeleteInClusterFailed Gave up deleting ConfigMap ns/a in cluster c9 after 1m0s: the cluster is not Ready; delete it there by hand",
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			members := newFakeMembers([]string{"c1"}, tt.down...)
			members.put("c1", appliedCopy(t, configMapObj("a")))
			members.unsynced = tt.unsynced
			tc := newTestController(t, federatedtypes.ByName("configmaps"), members, tt.fed)
			require.NoError(t, tc.sync(t, "ns/a"))
			assert.Equal(t, tt.wantMember, members.memberActions("c1"))
			if len(tt.wantMember) > 0 && tt.wantMember[0] != "delete" {
				patch := members.clients["c1"].Actions()[0].(clienttesting.PatchAction).GetPatch()
				assert.JSONEq(t, `{"metadata":{"labels":{"federation.kubernetes.io/federation-name":null,"federation.kubernetes.io/federation-uid":null},
					"annotations":{"federation.kubernetes.io/applied-hash":null,"federation.kubernetes.io/object-uid":null,"federation.kubernetes.io/adopted":null}}}`, string(patch))
			}
			var updates int
			for _, a := range tc.fedClient.Actions() {
				if a.GetVerb() == "update" {
					updates++
					obj := a.(clienttesting.UpdateAction).GetObject().(*unstructured.Unstructured)
					assert.Empty(t, obj.GetFinalizers())
				}
			}
			assert.Equal(t, tt.wantRelease, updates == 1, "finalizers removed")
			assert.Equal(t, tt.wantEvents, tc.events())
		})
	}
}

func TestDeletionOfACopyNotYetInTheCache(t *testing.T) {
	members := newFakeMembers([]string{"c1"})
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a", Finalizer))
	require.NoError(t, tc.sync(t, "ns/a"))
	delete(members.cache["c1"], "ns/a")
	require.NoError(t, tc.indexer.Update(deleting(configMapObj("a", Finalizer), 0)))
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"create", "delete"}, members.memberActions("c1"))
}

func TestDeletionDoneIsNotRepeatedForTheStaleCache(t *testing.T) {
	members := newFakeMembers([]string{"c1"})
	members.put("c1", appliedCopy(t, configMapObj("a")))
	fed := deleting(configMapObj("a", Finalizer), 0)
	fed.SetResourceVersion("7")
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
	require.NoError(t, tc.sync(t, "ns/a"))
	// The copy's deletion event comes before the cache sees the federated
	// object go: nothing more to do.
	delete(members.cache["c1"], "ns/a")
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"delete"}, members.memberActions("c1"))
	updates := 0
	for _, a := range tc.fedClient.Actions() {
		if a.GetVerb() == "update" {
			updates++
		}
	}
	assert.Equal(t, 1, updates, "finalizers removed once")
}

func TestFederationSystemNeverTravels(t *testing.T) {
	members := newFakeMembers([]string{"c1"})
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret"}}
	secret.SetName("c1")
	secret.SetNamespace(federationv1beta1.SystemNamespace)
	tc := newTestController(t, federatedtypes.ByName("secrets"), members, secret)
	require.NoError(t, tc.sync(t, federationv1beta1.SystemNamespace+"/c1"))
	assert.Empty(t, members.memberActions("c1"))

	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
	ns.SetName(federationv1beta1.SystemNamespace)
	tn := newTestController(t, federatedtypes.ByName("namespaces"), members, ns)
	require.NoError(t, tn.sync(t, federationv1beta1.SystemNamespace))
	assert.Empty(t, members.memberActions("c1"))
	assert.Empty(t, tn.fedClient.Actions())
}
