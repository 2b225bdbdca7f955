package propagation

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// drain runs the member writes queued for one cluster.
func (tc *testController) drain(t *testing.T, cluster string) {
	t.Helper()
	require.Contains(t, tc.w.Clusters(), cluster, "no queue for %s", cluster)
	tc.w.Drain(context.Background(), cluster)
	tc.afterWrites()
}

func TestASlowMemberHoldsUpOnlyItsOwnCopies(t *testing.T) {
	members := testmembers.New([]string{"c1", "c2"})
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters), configMapObj("b", federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
	ctx := context.Background()
	require.NoError(t, tc.Sync(ctx, "ns/a"))
	require.NoError(t, tc.Sync(ctx, "ns/b"))
	assert.Empty(t, members.Actions("c1"), "the reconcile hands the writes over")

	tc.drain(t, "c2")
	create := "create"
	assert.Equal(t, []string{create, create}, members.Actions("c2"), "c2 got both objects while c1 has not answered")
	assert.Equal(t, 2, tc.w.Len("c1"))
	assert.Empty(t, tc.events(), "the object's event waits for its last copy")

	tc.drain(t, "c1")
	assert.Equal(t, []string{
		"Normal CreateInCluster Created ConfigMap ns/a in clusters c1, c2",
		"Normal CreateInCluster Created ConfigMap ns/b in clusters c1, c2",
	}, tc.events())
	assert.True(t, tc.w.Idle(), "nothing left to write")
}

func TestANewerVersionReplacesAQueuedWrite(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	fed := configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
	ctx := context.Background()
	require.NoError(t, tc.Sync(ctx, "ns/a"))
	changed := fed.DeepCopy()
	changed.Object["data"] = map[string]any{"k": "v2"}
	require.NoError(t, tc.indexer.Update(changed))
	require.NoError(t, tc.Sync(ctx, "ns/a"))

	tc.drain(t, "c1")
	assert.Equal(t, []string{"create"}, members.Actions("c1"), "one write, of the newer version")
	got, _ := members.Get("c1", federatedtypes.ByName("configmaps").Resource, "ns", "a")
	assert.Equal(t, "v2", got.Object["data"].(map[string]any)["k"])
}

func TestDeletionWaitsForAMemberWriteUnderWay(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	fed := configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
	ctx := context.Background()
	require.NoError(t, tc.Sync(ctx, "ns/a"))
	// The object is deleted while a worker writes its copy.
	deletedDuringTheWrite := false
	members.Clients["c1"].PrependReactor("create", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
		if !deletedDuringTheWrite {
			deletedDuringTheWrite = true
			require.NoError(t, tc.indexer.Update(deleting(fed.DeepCopy(), 0)))
			require.NoError(t, tc.Sync(ctx, "ns/a"))
			assert.Empty(t, tc.fedClient.Actions(), "finalizer kept")
		}
		return false, nil, nil
	})

	// The write lands; then the deletion removes the copy it left.
	tc.drain(t, "c1")
	require.True(t, deletedDuringTheWrite)
	assert.Equal(t, []string{"create", "delete"}, members.Actions("c1"))
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"create", "delete"}, members.Actions("c1"))
	var released bool
	for _, a := range tc.fedClient.Actions() {
		if a.GetVerb() == "update" {
			released = len(a.(clienttesting.UpdateAction).GetObject().(*unstructured.Unstructured).GetFinalizers()) == 0
		}
	}
	assert.True(t, released, "finalizer removed once the copies are gone")
}

func TestOurWriteNotYetInTheCacheIsNotWrittenAgain(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
	require.NoError(t, tc.sync(t, "ns/a"))
	create := "create"
	require.Equal(t, []string{create}, members.Actions("c1"))

	// The member's watch has not brought the copy yet.
	delete(members.Cache["c1"], "ns/a")
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{create}, members.Actions("c1"), "no second call for our own write")

	// Its events came: created, then deleted there by hand.
	tc.MemberChanged("c1", federatedtypes.ByName("configmaps").Resource, configMapObj("a"))
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{create, "get", create}, members.Actions("c1"))
	assert.Contains(t, tc.events(), "Normal CreateInCluster Recreated ConfigMap ns/a in cluster c1: it was deleted there")
}

func TestDeletionTellsOfItsCopiesInOneEvent(t *testing.T) {
	members := testmembers.New([]string{"c1", "c2"})
	members.Put("c1", appliedCopy(t, configMapObj("a")))
	members.Put("c2", appliedCopy(t, configMapObj("a")))
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, deleting(configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters), 0))
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"delete"}, members.Actions("c1"))
	assert.Equal(t, []string{"delete"}, members.Actions("c2"))
	assert.Equal(t, []string{"Normal DeleteInCluster Deleted ConfigMap ns/a in clusters c1, c2"}, tc.events())
}

func TestAClusterThatLeftLosesItsQueue(t *testing.T) {
	members := testmembers.New([]string{"c1", "c2"})
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
	require.NoError(t, tc.Sync(context.Background(), "ns/a"))
	require.Equal(t, []string{"c1", "c2"}, tc.w.Clusters())

	// c2 is unjoined: gone from the Clusters.
	members.Ready, members.All = members.Ready[:1], members.All[:1]
	tc.ClustersChanged()
	assert.Equal(t, []string{"c1"}, tc.w.Clusters(), "c2's queue is stopped")
	assert.False(t, tc.w.Has("ns/a", "c2"), "its writes are dropped")
	assert.True(t, tc.w.Has("ns/a", "c1"))
}

// syncWithWorkers syncs every object with 4 copy workers per member running,
// and waits until every member write is done.
func syncWithWorkers(t *testing.T, tc *testController, objs []*unstructured.Unstructured) {
	t.Helper()
	tc.opts.Workers = 4
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	tc.w = tc.newWriter()
	tc.r = tc.newReleaser()
	tc.w.Run(ctx)
	for _, o := range objs {
		require.NoError(t, tc.Sync(ctx, "ns/"+o.GetName()))
	}
	require.Eventually(t, func() bool {
		return tc.w.Idle()
	}, 10*time.Second, 10*time.Millisecond, "every copy written")
}

func TestTheWorkersWriteEveryCopy(t *testing.T) {
	members := testmembers.New([]string{"c1", "c2", "c3"})
	var objs []*unstructured.Unstructured
	for i := range 40 {
		objs = append(objs, configMapObj(fmt.Sprintf("o%02d", i), federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
	}
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, objs...)
	syncWithWorkers(t, tc, objs)
	for _, c := range []string{"c1", "c2", "c3"} {
		assert.Len(t, members.Actions(c), len(objs), "one apply per object in %s", c)
		for _, o := range objs {
			_, ok := members.Get(c, federatedtypes.ByName("configmaps").Resource, "ns", o.GetName())
			assert.True(t, ok, "%s in %s", o.GetName(), c)
		}
	}
	// The event is recorded just after the last copy's task is dropped.
	var events []string
	require.Eventually(t, func() bool {
		events = append(events, tc.events()...)
		return len(events) >= len(objs)
	}, 5*time.Second, 10*time.Millisecond, "an event per object")
	assert.Len(t, events, len(objs), "one event per object")
	for _, e := range events {
		assert.Contains(t, e, "in clusters c1, c2, c3", "one event naming every cluster, never split")
	}
}

func TestTheEchoOfOurOwnWriteIsNotReconciled(t *testing.T) {
	members := testmembers.New([]string{"c1", "c2"})
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
	require.NoError(t, tc.sync(t, "ns/a"))
	res := federatedtypes.ByName("configmaps").Resource
	for _, c := range []string{"c1", "c2"} {
		ours, ok := members.Get(c, res, "ns", "a")
		require.True(t, ok, "written to %s", c)
		tc.MemberChanged(c, res, ours)
	}
	assert.Zero(t, tc.queue.Len(), "the watch events of our own writes")

	// Somebody else changes the copy in c1: its new version is looked at.
	changed, _ := members.Get("c1", res, "ns", "a")
	changed = changed.DeepCopy()
	changed.SetResourceVersion(changed.GetResourceVersion() + "0")
	members.Put("c1", changed)
	tc.MemberChanged("c1", res, changed)
	require.Equal(t, 1, tc.queue.Len(), "a change that is not ours")
	k, _ := tc.queue.Get()
	tc.queue.Done(k)

	// The copy in c2 is deleted there: looked at, to restore it.
	gone, _ := members.Get("c2", res, "ns", "a")
	delete(members.Cache["c2"], "ns/a")
	tc.MemberChanged("c2", res, gone)
	assert.Equal(t, 1, tc.queue.Len(), "a deleted copy")
}

// The first update of a copy we created that leaves out a field the create
// set is three writes (an apply, a patch handing the create's fields over,
// an apply). Their watch events may all come after the write has ended:
// none of them is somebody else's change (CI once saw each such copy
// applied a third time, as "Restored").
func TestTheLateEchoesOfAnUpdateInStepsAreNotReconciled(t *testing.T) {
	fed := configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
	members := testmembers.New([]string{"c1"})
	members.Put("c1", appliedCopy(t, fed))
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
	require.NoError(t, tc.sync(t, "ns/a"))
	require.Empty(t, members.Actions("c1"), "in sync")

	// The create set data.gone, which the update leaves out.
	fields := map[metav1.ManagedFieldsOperationType]*metav1.FieldsV1{
		metav1.ManagedFieldsOperationApply:  {Raw: []byte(`{"f:data":{"f:k":{}}}`)},
		metav1.ManagedFieldsOperationUpdate: {Raw: []byte(`{"f:data":{"f:gone":{},"f:k":{}}}`)},
	}
	entry := func(op metav1.ManagedFieldsOperationType) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: writer.FieldManager, Operation: op, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: fields[op]}
	}
	// The member answers each write with its next version, and its watch
	// brings none of them until the write has ended.
	var steps []*unstructured.Unstructured
	members.Clients["c1"].PrependReactor("patch", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		p := a.(clienttesting.PatchAction)
		step := &unstructured.Unstructured{}
		if p.GetPatchType() == types.ApplyPatchType {
			if err := json.Unmarshal(p.GetPatch(), &step.Object); err != nil {
				return true, nil, err
			}
		} else {
			step = steps[len(steps)-1].DeepCopy()
		}
		managed := []metav1.ManagedFieldsEntry{entry(metav1.ManagedFieldsOperationApply)}
		if len(steps) == 0 {
			managed = append(managed, entry(metav1.ManagedFieldsOperationUpdate))
		}
		step.SetManagedFields(managed)
		step.SetResourceVersion(fmt.Sprint(len(steps) + 2))
		steps = append(steps, step)
		return true, step, nil
	})
	changed := fed.DeepCopy()
	changed.Object["data"] = map[string]any{"k": "v2"}
	require.NoError(t, tc.indexer.Update(changed))
	tc.events()
	require.NoError(t, tc.sync(t, "ns/a"))
	apply, jsonPatch := "patch:"+string(types.ApplyPatchType), "patch:"+string(types.JSONPatchType)
	require.Equal(t, []string{apply, jsonPatch, apply}, members.Actions("c1"))
	require.Len(t, steps, 3)

	for _, step := range steps {
		members.Put("c1", step)
		tc.MemberChanged("c1", federatedtypes.ByName("configmaps").Resource, step)
		assert.Zero(t, tc.queue.Len(), "the late event of version %s, which our write went through", step.GetResourceVersion())
		require.NoError(t, tc.sync(t, "ns/a"))
		assert.Len(t, members.Actions("c1"), 3, "written again with the cache at version %s", step.GetResourceVersion())
	}
	assert.Equal(t, []string{"Normal UpdateInCluster Updated ConfigMap ns/a in cluster c1"}, tc.events())

	// A later version is somebody else's.
	theirs := steps[2].DeepCopy()
	theirs.SetResourceVersion("5")
	members.Put("c1", theirs)
	tc.MemberChanged("c1", federatedtypes.ByName("configmaps").Resource, theirs)
	assert.Equal(t, 1, tc.queue.Len(), "a version our write did not leave")
}

func TestEveryEventOfATypeWithStatusIsReconciled(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	tc := newTestController(t, federatedtypes.ByName("deployments"), members, deploymentObj())
	require.NoError(t, tc.sync(t, "ns/d"))
	ours, ok := members.Get("c1", federatedtypes.ByName("deployments").Resource, "ns", "d")
	require.True(t, ok)
	tc.MemberChanged("c1", federatedtypes.ByName("deployments").Resource, ours)
	assert.Equal(t, 1, tc.queue.Len(), "its status is brought back from the members")
}

func TestAnEventWhileWritingIsCheckedOnceTheWriteAnswers(t *testing.T) {
	for _, foreign := range []bool{false, true} {
		t.Run(fmt.Sprintf("somebody else's change: %v", foreign), func(t *testing.T) {
			members := testmembers.New([]string{"c1"})
			tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
			require.NoError(t, tc.Sync(context.Background(), "ns/a"))
			if foreign {
				// The member answers our write with version 2, and its
				// cache meanwhile holds a later change, 3, by somebody else.
				members.Clients["c1"].PrependReactor("create", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
					ours := appliedCopy(t, configMapObj("a"))
					ours.SetResourceVersion("2")
					theirs := ours.DeepCopy()
					theirs.SetResourceVersion("3")
					members.Put("c1", theirs)
					return true, ours, nil
				})
			}
			// The write is under way when the member's event comes.
			members.Clients["c1"].PrependReactor("create", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
				tc.MemberChanged("c1", federatedtypes.ByName("configmaps").Resource, configMapObj("a"))
				assert.Zero(t, tc.queue.Len(), "taken for the echo of the write under way")
				return false, nil, nil
			})
			tc.drain(t, "c1")
			if foreign {
				assert.Equal(t, 1, tc.queue.Len(), "the cache holds another version than our write left: looked at again")
			} else {
				assert.Zero(t, tc.queue.Len(), "the cache holds our write")
			}
		})
	}
}

// The admission plugin sets the finalizer on every object created while a
// cluster is joined; once the last cluster has left, deleting such an
// object must not wait for anything.
func TestDeletionAfterTheLastClusterLeftIsImmediate(t *testing.T) {
	tc := newTestController(t, federatedtypes.ByName("configmaps"), testmembers.New(nil), deleting(configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters), 0))
	require.NoError(t, tc.sync(t, "ns/a"))
	var released bool
	for _, a := range tc.fedClient.Actions() {
		if a.GetVerb() == "update" {
			released = len(a.(clienttesting.UpdateAction).GetObject().(*unstructured.Unstructured).GetFinalizers()) == 0
		}
	}
	assert.True(t, released, "finalizer removed at once")
	assert.Empty(t, tc.events(), "no copies, nothing to tell")
}

// The status written after the writes are handed over must not change the
// object the member writes in flight read (run with -race: the controller
// manager died of "concurrent map read and map write" in an e2e run).
func TestStatusIsWrittenWhileTheWorkersWrite(t *testing.T) {
	members := testmembers.New([]string{"c1", "c2", "c3"})
	var objs []*unstructured.Unstructured
	for i := range 20 {
		d := deploymentObj()
		d.SetName(fmt.Sprintf("d%02d", i))
		objs = append(objs, d)
	}
	tc := newTestController(t, federatedtypes.ByName("deployments"), members, objs...)
	syncWithWorkers(t, tc, objs)
	var statusWrites int
	for _, a := range tc.fedClient.Actions() {
		if a.GetSubresource() == "status" {
			statusWrites++
		}
	}
	assert.Equal(t, len(objs), statusWrites, "one status write per object (Propagated while in flight)")
}
