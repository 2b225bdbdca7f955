package writer

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// testWriter is a writer over fake members, with the federation's cache.
type testWriter struct {
	*Writer
	recorder *record.FakeRecorder
	indexer  cache.Indexer
}

func newTestWriter(t *testing.T, typ *federatedtypes.Type, members *testmembers.Members, fed ...*unstructured.Unstructured) *testWriter {
	t.Helper()
	client, indexer, lister := testmembers.Federation(t, typ, fed...)
	recorder := record.NewFakeRecorder(100)
	w := New(typ, client, lister, members, recorder,
		Config{Workers: 1, MemberTimeout: time.Second}, workqueue.DefaultTypedControllerRateLimiter[string])
	return &testWriter{Writer: w, recorder: recorder, indexer: indexer}
}

// applyTask is the task the reconcile gives cluster for the federated
// object of key, as the cache holds it.
func (tw *testWriter) applyTask(t *testing.T, objKey, cluster string) Task {
	t.Helper()
	fed, err := tw.objs.Get(fedobject.SplitKey(objKey))
	require.NoError(t, err)
	d, h, err := plan.Desired(tw.typ, fed, "fed", "fed-uid")
	require.NoError(t, err)
	d, h, err = tw.ForCopy(cluster, fed, d, h)
	require.NoError(t, err)
	return Task{Action: Apply, Fed: fed, Desired: d, Hash: h}
}

func (tw *testWriter) events() []string {
	var out []string
	for {
		select {
		case e := <-tw.recorder.Events:
			out = append(out, e)
		default:
			sort.Strings(out)
			return out
		}
	}
}

func configMap(name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "v"}}}
	o.SetName(name)
	o.SetNamespace("ns")
	return o
}

// A task carries what the reconcile judged the copy on; when that no
// longer holds as it runs (the member changed the copy, or another write
// of ours ended), it is not carried out on the old judgment: the object is
// reconciled again instead.
func TestATaskJudgedOnWhatChangedSinceIsNotWritten(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	tw := newTestWriter(t, federatedtypes.ByName("configmaps"), members, configMap("a"))
	ctx := context.Background()
	require.NoError(t, tw.WriteOnceForTesting(ctx, "c1", tw.applyTask(t, "ns/a", "c1")))
	tw.Take()
	written := len(members.Actions("c1"))

	judged := func() Task {
		task := tw.applyTask(t, "ns/a", "c1")
		cur, _ := members.Get("c1", tw.typ.Resource, "ns", "a")
		last, known := tw.Last("c1", "ns/a")
		task.Basis = plan.Basis(cur, last, known)
		return task
	}
	task := judged()
	// The member changes it before the task runs.
	cur, _ := members.Get("c1", tw.typ.Resource, "ns", "a")
	changed := cur.DeepCopy()
	changed.SetResourceVersion("7")
	changed.SetGeneration(2)
	members.Put("c1", changed)
	require.NoError(t, tw.WriteOnceForTesting(ctx, "c1", task))
	assert.Len(t, members.Actions("c1"), written, "not written on the old judgment")
	assert.Equal(t, []Outcome{{ObjKey: "ns/a", Requeue: true}}, tw.Take(), "judged again")

	// Judged on what holds: carried out (here, the tenant's change).
	changedAtFederation := configMap("a")
	changedAtFederation.Object["data"] = map[string]any{"k": "v2"}
	require.NoError(t, tw.indexer.Update(changedAtFederation))
	require.NoError(t, tw.WriteOnceForTesting(ctx, "c1", judged()))
	assert.Len(t, members.Actions("c1"), written+1)
}

// Moving our create's fields to our applies tests the resourceVersion the
// move was made from: the member writing the copy meanwhile (its HPA
// scaling it, its controllers writing status) conflicts it, and the move
// is made again from what the member holds, more than once.
func TestTheCreatesFieldsMoveAgainWhileTheMemberWritesTheCopy(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	tw := newTestWriter(t, federatedtypes.ByName("configmaps"), members, configMap("a"))
	created := configMap("a")
	created.SetResourceVersion("5")
	created.SetManagedFields([]metav1.ManagedFieldsEntry{{
		Manager: FieldManager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:k":{}}}`)},
	}})
	client := members.Clients["c1"]
	require.NoError(t, client.Tracker().Add(created))
	conflicts := 0
	client.PrependReactor("patch", "configmaps", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.(clienttesting.PatchAction).GetPatchType() == types.JSONPatchType && conflicts < 3 {
			conflicts++
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "a", errors.New("the object has been modified"))
		}
		return false, nil, nil
	})

	_, err := tw.upgrade(context.Background(), "c1", configMap("a"), created)
	require.NoError(t, err)
	assert.Equal(t, 3, conflicts)
	moves := 0
	for _, a := range members.Actions("c1") {
		if a == "patch:"+string(types.JSONPatchType) {
			moves++
		}
	}
	assert.Equal(t, 4, moves, "three conflicted moves, then the one that held")
}
