package propagation

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/poll"
)

type testController struct {
	*Controller
	fedClient *dynamicfake.FakeDynamicClient
	members   *testmembers.Members
	recorder  *record.FakeRecorder
	indexer   cache.Indexer
}

func newTestController(t *testing.T, a *federatedtypes.Type, members *testmembers.Members, fed ...*unstructured.Unstructured) *testController {
	t.Helper()
	client, indexer, lister := testmembers.Federation(t, a, fed...)
	recorder := record.NewFakeRecorder(100)
	c := newController(a, client, lister, members, recorder,
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
		for _, cluster := range tc.w.Clusters() {
			errs = append(errs, tc.w.Drain(ctx, cluster)...)
		}
		tc.afterWrites()
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
	members := testmembers.New([]string{"c1", "c2"})
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a"))
	require.NoError(t, tc.sync(t, "ns/a"))
	for _, c := range []string{"c1", "c2"} {
		assert.Equal(t, []string{"create"}, members.Actions(c), c)
	}
	assert.Empty(t, tc.fedClient.Actions(), "no finalizer: its deletion is recorded in a tombstone")
	assert.Equal(t, []string{"Normal CreateInCluster Created ConfigMap ns/a in clusters c1, c2"}, tc.events(), "one event for the object")
}

func TestSyncAddsTheFinalizerToANamespace(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	tc := newTestController(t, federatedtypes.ByName("namespaces"), members, fedNamespace("team"))
	require.NoError(t, tc.Sync(context.Background(), "team"))
	fed, err := tc.fedClient.Resource(federatedtypes.Namespaces.Resource).Get(context.Background(), "team", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Contains(t, fed.GetFinalizers(), federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
}

func TestSyncAtRestWritesNothing(t *testing.T) {
	fed := configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
	members := testmembers.New([]string{"c1", "c2"})
	members.Put("c1", appliedCopy(t, fed))
	members.Put("c2", appliedCopy(t, fed))
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
	for range 3 {
		require.NoError(t, tc.sync(t, "ns/a"))
	}
	assert.Empty(t, members.Actions("c1"))
	assert.Empty(t, members.Actions("c2"))
	assert.Empty(t, tc.fedClient.Actions(), "no finalizer or status write")
	assert.Empty(t, tc.events())
}

func TestSyncRestoresDrift(t *testing.T) {
	fed := configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
	members := testmembers.New([]string{"c1", "c2"})
	members.Put("c1", appliedCopy(t, fed))
	members.Put("c2", appliedCopy(t, fed))
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
	require.NoError(t, tc.sync(t, "ns/a"))

	// By hand: c1's data edited (a new resourceVersion), c2's copy deleted.
	edited := appliedCopy(t, fed)
	edited.SetResourceVersion("2")
	edited.Object["data"] = map[string]any{"k": "hand"}
	members.Put("c1", edited)
	delete(members.Cache["c2"], "ns/a")
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"patch:" + string(types.ApplyPatchType)}, members.Actions("c1"))
	assert.Equal(t, []string{"get", "create"}, members.Actions("c2"))
	assert.Equal(t, []string{
		"Normal CreateInCluster Recreated ConfigMap ns/a in cluster c2: it was deleted there",
		"Normal UpdateInCluster Restored ConfigMap ns/a in cluster c1: it was changed there",
	}, tc.events())
}

func TestSyncWithAStaleCacheLooksAgainSoon(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	tc := newTestController(t, federatedtypes.Namespaces, members, fedNamespace("a"))
	tc.fedClient.PrependReactor("update", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(federatedtypes.Namespaces.Resource.GroupResource(), "a", fmt.Errorf("the object has been modified"))
	})
	require.NoError(t, tc.sync(t, "a"), "a conflict is not an error")
	assert.Empty(t, members.Actions("c1"), "nothing written from the stale copy")
	require.Eventually(t, func() bool { return tc.queue.Len() == 1 }, 5*time.Second, 10*time.Millisecond, "requeued")
}

func TestSyncReadsFirstWhereTheCacheHasNotSynced(t *testing.T) {
	members := testmembers.New([]string{"c1", "c2"})
	members.Unsynced = []string{"c1"}
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"get", "create"}, members.Actions("c1"), "absence from an unsynced cache proves nothing")
	assert.Equal(t, []string{"create"}, members.Actions("c2"), "a synced cache without the object: one call")
}

func TestSyncDeletesWhereNoLongerSelected(t *testing.T) {
	fed := configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
	fed.SetAnnotations(map[string]string{"federation.alpha.kubernetes.io/cluster-selector": `[{"key":"cluster","operator":"==","values":["1"]}]`})
	members := testmembers.New([]string{"c1", "c2"})
	members.Ready[0].Labels = map[string]string{"cluster": "1"}
	members.Ready[1].Labels = map[string]string{"cluster": "2"}
	members.Put("c2", appliedCopy(t, configMapObj("a")))
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"create"}, members.Actions("c1"))
	assert.Equal(t, []string{"delete"}, members.Actions("c2"))
}

func TestSyncOneFailingClusterDoesNotStopTheOthers(t *testing.T) {
	members := testmembers.New([]string{"c1", "c2"})
	members.Clients["c1"].PrependReactor("create", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewBadRequest("the server could not find the requested resource")
	})
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
	err := tc.sync(t, "ns/a")
	require.ErrorContains(t, err, "creating ConfigMap ns/a in cluster c1")
	assert.Equal(t, []string{"create"}, members.Actions("c2"))
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
			fed:         deleting(configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters), 0),
			wantMember:  []string{"delete"},
			wantRelease: true,
			wantEvents:  []string{"Normal DeleteInCluster Deleted ConfigMap ns/a in cluster c1"},
		},
		{
			name:        "orphan: copies kept, our label removed",
			fed:         deleting(configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters, metav1.FinalizerOrphanDependents), 0),
			down:        []string{"c9"},
			wantMember:  []string{"patch:" + string(types.MergePatchType)},
			wantRelease: true,
		},
		{
			name:       "a selected cluster is down: wait",
			fed:        deleting(configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters), 0),
			down:       []string{"c9"},
			wantMember: []string{"delete"},
			wantEvents: []string{"Normal DeleteInCluster Deleted ConfigMap ns/a in cluster c1"},
		},
		{
			name:       "a cluster whose cache has not synced yet: wait",
			fed:        deleting(configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters), 0),
			unsynced:   []string{"c1"},
			wantMember: nil,
		},
		{
			name:        "a selected cluster is down for too long: give up with an event",
			fed:         deleting(configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters), 2*time.Minute),
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
			members := testmembers.New([]string{"c1"}, tt.down...)
			members.Put("c1", appliedCopy(t, configMapObj("a")))
			members.Unsynced = tt.unsynced
			tc := newTestController(t, federatedtypes.ByName("configmaps"), members, tt.fed)
			require.NoError(t, tc.sync(t, "ns/a"))
			assert.Equal(t, tt.wantMember, members.Actions("c1"))
			if len(tt.wantMember) > 0 && tt.wantMember[0] != "delete" {
				patch := members.Clients["c1"].Actions()[0].(clienttesting.PatchAction).GetPatch()
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
	members := testmembers.New([]string{"c1"})
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
	require.NoError(t, tc.sync(t, "ns/a"))
	delete(members.Cache["c1"], "ns/a")
	require.NoError(t, tc.indexer.Update(deleting(configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters), 0)))
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"create", "delete"}, members.Actions("c1"))
}

func TestDeletionDoneIsNotRepeatedForTheStaleCache(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	members.Put("c1", appliedCopy(t, configMapObj("a")))
	fed := deleting(configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters), 0)
	fed.SetResourceVersion("7")
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
	require.NoError(t, tc.sync(t, "ns/a"))
	// The copy's deletion event comes before the cache sees the federated
	// object go: nothing more to do.
	delete(members.Cache["c1"], "ns/a")
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"delete"}, members.Actions("c1"))
	updates := 0
	for _, a := range tc.fedClient.Actions() {
		if a.GetVerb() == "update" {
			updates++
		}
	}
	assert.Equal(t, 1, updates, "finalizers removed once")
}

func TestFederationSystemNeverTravels(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret"}}
	secret.SetName("c1")
	secret.SetNamespace(federationv1beta1.SystemNamespace)
	tc := newTestController(t, federatedtypes.ByName("secrets"), members, secret)
	require.NoError(t, tc.sync(t, federationv1beta1.SystemNamespace+"/c1"))
	assert.Empty(t, members.Actions("c1"))

	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
	ns.SetName(federationv1beta1.SystemNamespace)
	tn := newTestController(t, federatedtypes.ByName("namespaces"), members, ns)
	require.NoError(t, tn.sync(t, federationv1beta1.SystemNamespace))
	assert.Empty(t, members.Actions("c1"))
	assert.Empty(t, tn.fedClient.Actions())
}

// While a Ready cluster's caches are still starting (the controller manager
// just started), nothing is planned or written: the object is looked at
// again shortly, and written once the members have settled.
func TestNothingIsWrittenUntilTheMembersSettle(t *testing.T) {
	members := testmembers.New([]string{"c1", "c2"})
	members.Unsettled = true
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a"))
	require.NoError(t, tc.Sync(context.Background(), "ns/a"))
	for _, c := range []string{"c1", "c2"} {
		assert.Empty(t, members.Actions(c), c)
	}
	assert.Empty(t, tc.events())
	require.NoError(t, poll.Until(context.Background(), 5*time.Second, "the object queued again", func(context.Context) error {
		if tc.queue.Len() != 1 {
			return errors.New("not queued")
		}
		return nil
	}))

	members.Unsettled = false
	require.NoError(t, tc.sync(t, "ns/a"))
	for _, c := range []string{"c1", "c2"} {
		assert.Equal(t, []string{"create"}, members.Actions(c), c)
	}
}

// A cluster where the federation may not even read the type (a custom
// resource group it was not joined for) and never wrote a copy holds no
// deletion; one merely not synced yet does.
func TestDeletionDoesNotWaitForAClusterThatForbidsTheType(t *testing.T) {
	for _, forbidden := range []bool{false, true} {
		members := testmembers.New([]string{"c1"})
		members.Unsynced = []string{"c1"}
		if forbidden {
			members.ForbiddenIn = []string{"c1"}
		}
		tc := newTestController(t, federatedtypes.ByName("configmaps"), members,
			deleting(configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters), 0))
		require.NoError(t, tc.sync(t, "ns/a"))
		assert.Empty(t, members.Actions("c1"), "nothing written to c1")
		released := false
		for _, a := range tc.fedClient.Actions() {
			if a.GetVerb() == "update" {
				released = len(a.(clienttesting.UpdateAction).GetObject().(*unstructured.Unstructured).GetFinalizers()) == 0
			}
		}
		assert.Equal(t, forbidden, released, "finalizer removed when c1 forbids the type: %v", forbidden)
	}
}
