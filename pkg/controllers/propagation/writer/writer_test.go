package writer

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

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
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	var objs []runtime.Object
	for _, o := range fed {
		require.NoError(t, indexer.Add(o))
		objs = append(objs, o)
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{typ.Resource: typ.Kind + "List"}, objs...)
	recorder := record.NewFakeRecorder(100)
	w := New(typ, client, cache.NewGenericLister(indexer, typ.Resource.GroupResource()), members, recorder,
		Config{Workers: 1, MemberTimeout: time.Second}, workqueue.DefaultTypedControllerRateLimiter[string])
	return &testWriter{Writer: w, recorder: recorder, indexer: indexer}
}

// applyTask is the task the reconcile gives cluster for the federated
// object of key, as the cache holds it.
func (tw *testWriter) applyTask(t *testing.T, objKey, cluster string) Task {
	t.Helper()
	fed, err := tw.get(splitKey(objKey))
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

func TestRepairsOfACopyTheMemberKeepsChangingAreBudgeted(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	fed := configMap("a")
	tw := newTestWriter(t, federatedtypes.ByName("configmaps"), members, fed)
	tw.repairs.First = 0 // no backoff: count the repairs alone
	ctx := context.Background()
	require.NoError(t, tw.WriteOnceForTesting(ctx, "c1", tw.applyTask(t, "ns/a", "c1")))
	writes := func() int { return len(members.Actions("c1")) }
	created := writes()

	// The member changes the copy back after every write.
	var lastErr error
	for range 20 {
		cur, ok := members.Get("c1", federatedtypes.ByName("configmaps").Resource, "ns", "a")
		require.True(t, ok)
		changed := cur.DeepCopy()
		changed.Object["data"] = map[string]any{"k": "theirs"}
		changed.SetResourceVersion(changed.GetResourceVersion() + "9")
		changed.SetGeneration(changed.GetGeneration() + 1)
		members.Put("c1", changed)
		lastErr = tw.WriteOnceForTesting(ctx, "c1", tw.applyTask(t, "ns/a", "c1"))
	}
	assert.LessOrEqual(t, writes()-created, tw.repairs.Max, "at most the budget's repairs")
	assert.GreaterOrEqual(t, writes()-created, 1, "the first change is repaired")
	require.Error(t, lastErr)
	assert.Contains(t, lastErr.Error(), "DriftConflict: ConfigMap ns/a in cluster c1 was changed there again after 5 repairs")
	var told int
	for _, e := range tw.events() {
		if strings.HasPrefix(e, "Warning DriftConflict") {
			told++
		}
	}
	assert.Equal(t, 1, told, "told once")

	// The tenant changes the object: it is written at once.
	fed = fed.DeepCopy()
	fed.Object["data"] = map[string]any{"k": "v2"}
	require.NoError(t, tw.indexer.Update(fed))
	before := writes()
	require.NoError(t, tw.WriteOnceForTesting(ctx, "c1", tw.applyTask(t, "ns/a", "c1")))
	assert.Equal(t, before+1, writes())
}

// More LISTs than a round's budget are taken in turn: every one within
// ceil(n/budget) rounds.
func TestUnheldListsTakeTurns(t *testing.T) {
	u := newUnheldReferences()
	for i := range 25 {
		u.set(copyAt{"c1", fmt.Sprintf("ns-%02d/x", i)}, unheldNames{refs: []federatedtypes.Reference{{Resource: federatedtypes.ClaimsResource, Name: "a"}}})
	}
	seen := map[string]int{}
	for range 3 {
		lists, _ := u.round(10)
		require.Len(t, lists, 10)
		for _, l := range lists {
			seen[l.namespace]++
		}
	}
	assert.Len(t, seen, 25, "every namespace in 3 rounds of 10")
}

// However many names copies give, a round makes one LIST per member,
// namespace and resource; what is known of an object that is gone is
// forgotten.
func TestUnheldNamesAreListedOncePerNamespaceAndResource(t *testing.T) {
	u := newUnheldReferences()
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	for i := range 30 {
		var refs []federatedtypes.Reference
		for j := range 100 {
			refs = append(refs, federatedtypes.Reference{Resource: secrets, Name: fmt.Sprintf("s-%d-%d", i, j), Optional: true})
		}
		u.set(copyAt{"c1", fmt.Sprintf("ns/d-%d", i)}, unheldNames{refs: refs})
	}
	lists, wants := u.round(maxUnheldLists)
	require.Len(t, lists, 1)
	assert.Len(t, wants[lists[0]].names, 3000)

	for i := range 30 {
		u.forget(fmt.Sprintf("ns/d-%d", i), nil)
	}
	assert.Empty(t, u.copies)
}

// A task carries what the reconcile judged the copy on; when that no
// longer holds as it runs (the member changed the copy, or another write
// of ours ended), it is not carried out on the old judgment: the object is
// reconciled again instead.
func TestATaskJudgedOnWhatChangedSinceIsNotWritten(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	tw := newTestWriter(t, federatedtypes.ByName("configmaps"), members, configMap("a"))
	tw.repairs.First = 0 // the repair below goes at once
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

	// Judged on what holds: carried out.
	require.NoError(t, tw.WriteOnceForTesting(ctx, "c1", judged()))
	assert.Len(t, members.Actions("c1"), written+1)
}
