package propagation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// withdrawnType is the ConfigMaps type as a custom resource's: its
// definition is being deleted when withdrawn says so.
func withdrawnType(withdrawn, keep *bool) *federatedtypes.Type {
	t := *federatedtypes.ByName("configmaps")
	t.Withdrawn = func(string) (bool, bool) { return *withdrawn, *keep }
	return &t
}

func TestAWithdrawnTypeLetsGoTheCopiesOfObjectsGoneWithoutTombstones(t *testing.T) {
	withdrawn, keep := false, false
	typ := withdrawnType(&withdrawn, &keep)
	gone := withUID(configMapObj("gone"), "uid-gone")
	still := withUID(configMapObj("still"), "uid-still")
	adopted := withUID(configMapObj("adopted"), "uid-adopted")
	members := testmembers.New([]string{"c1", "c2"})
	for _, c := range []string{"c1", "c2"} {
		members.Put(c, appliedCopy(t, gone))
		members.Put(c, appliedCopy(t, still))
	}
	members.Put("c1", adoptedCopy(t, adopted))
	own := configMapObj("own") // the member's: no federation label
	members.Put("c1", own)
	tc := newTestController(t, typ, members, still) // gone and adopted went without tombstones
	tc.Controller.members = listingMembers{Members: members, uid: members.FederationUID()}
	tc.w = tc.newWriter()
	tc.r = tc.newReleaser()

	require.NoError(t, tc.sync(t, "ns/gone"))
	assert.Empty(t, members.Actions("c1"), "a copy whose object is gone without a tombstone stays while the type is defined")
	assert.Empty(t, tc.r.WithdrawnLeft())

	withdrawn = true
	assert.Contains(t, tc.r.WithdrawnLeft(), "ns/gone in cluster c1", "what is left names the copies")
	for _, key := range []string{"ns/gone", "ns/still", "ns/adopted", "ns/own"} {
		require.NoError(t, tc.sync(t, key))
	}
	assert.ElementsMatch(t, []string{"delete gone", "patch adopted"}, namedActions(members, "c1"),
		"gone's copy deleted, the adopted copy given back, still's and the member's own untouched")
	assert.Equal(t, []string{"delete gone"}, namedActions(members, "c2"))
}

// namedActions lists "verb name" of a member's calls.
func namedActions(m *testmembers.Members, cluster string) []string {
	var out []string
	for _, a := range m.Clients[cluster].Actions() {
		if n, ok := a.(interface{ GetName() string }); ok {
			out = append(out, a.GetVerb()+" "+n.GetName())
		}
	}
	return out
}

func TestAWithdrawnTypeDeletedWithOrphanGivesTheCopiesBack(t *testing.T) {
	withdrawn, keep := true, true
	typ := withdrawnType(&withdrawn, &keep)
	gone := withUID(configMapObj("gone"), "uid-gone")
	members := testmembers.New([]string{"c1"})
	members.Put("c1", appliedCopy(t, gone))
	tc := newTestController(t, typ, members)
	require.NoError(t, tc.sync(t, "ns/gone"))
	assert.Equal(t, []string{"patch:" + string(types.MergePatchType)}, members.Actions("c1"), "orphaned: our labels taken off, never deleted")
}

func TestAWithdrawnCopyIsLetGoAsTheObjectItRecords(t *testing.T) {
	withdrawn, keep := true, false
	typ := withdrawnType(&withdrawn, &keep)
	members := testmembers.New([]string{"c1"})
	// The copy is let go as the object it records (uid-a), so that the
	// writer's check against a later object's copy lets it through.
	cp := appliedCopy(t, withUID(configMapObj("a"), "uid-a"))
	members.Put("c1", cp)
	tc := newTestController(t, typ, members)
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"delete a"}, namedActions(members, "c1"))
}

func TestADeletionWaitsForItsDependentsAtMostDeletionWait(t *testing.T) {
	pending := "copies of 2 custom resources"
	crdLike := *federatedtypes.ByName("configmaps")
	crdLike.Finalized = true
	crdLike.Dependents = func(*unstructured.Unstructured) string { return pending }
	fed := withUID(configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters), "uid-a")
	fed.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
	members := testmembers.New([]string{"c1"})
	members.Put("c1", appliedCopy(t, fed))
	tc := newTestController(t, &crdLike, members, fed)

	require.NoError(t, tc.Sync(t.Context(), "ns/a"))
	assert.Empty(t, tc.w.Clusters(), "nothing let go while its dependents are")
	assert.Empty(t, tc.fedClient.Actions(), "the finalizer stays")

	pending = ""
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"delete"}, members.Actions("c1"))

	// Past DeletionWait it goes on, saying what was left.
	pending = "copies of 1 custom resource"
	late := withUID(configMapObj("late", federationv1beta1.FinalizerDeleteFromUnderlyingClusters), "uid-late")
	late.SetDeletionTimestamp(&metav1.Time{Time: time.Now().Add(-2 * time.Minute)})
	members.Put("c1", appliedCopy(t, late))
	require.NoError(t, tc.indexer.Add(late))
	tc.events()
	require.NoError(t, tc.sync(t, "ns/late"))
	assert.Equal(t, []string{"delete", "delete"}, members.Actions("c1"))
	assert.Contains(t, tc.events(), "Warning DeleteInClusterFailed Gave up waiting after 1m0s for what depends on ConfigMap ns/late: copies of 1 custom resource")
}

func TestAWithdrawnTypeLetsGoOnlyWhereItsDefinitionsCopyDoesNot(t *testing.T) {
	typ := *federatedtypes.ByName("configmaps")
	// c1 holds the definition's copy, which takes its objects with it.
	typ.Withdrawn = func(cluster string) (bool, bool) { return cluster != "c1", false }
	gone := withUID(configMapObj("gone"), "uid-gone")
	members := testmembers.New([]string{"c1", "c2"})
	members.Put("c1", appliedCopy(t, gone))
	members.Put("c2", appliedCopy(t, gone))
	tc := newTestController(t, &typ, members)
	tc.Controller.members = listingMembers{Members: members, uid: members.FederationUID()}
	tc.w = tc.newWriter()
	tc.r = tc.newReleaser()
	assert.Equal(t, "ns/gone in cluster c2", tc.r.WithdrawnLeft())
	require.NoError(t, tc.sync(t, "ns/gone"))
	assert.Empty(t, namedActions(members, "c1"))
	assert.Equal(t, []string{"delete gone"}, namedActions(members, "c2"))
}

func TestAWithdrawnTypeWaitsForUnsyncedCachesOnlyWhereItIsServed(t *testing.T) {
	typ := *federatedtypes.ByName("configmaps")
	typ.Withdrawn = func(string) (bool, bool) { return true, false }
	members := testmembers.New([]string{"c1", "c2", "c3", "c4"})
	members.Unsynced = []string{"c1", "c2", "c3"}
	members.ForbiddenIn = []string{"c2"} // may not be read there: nothing of ours
	members.UnservedIn = []string{"c3"}  // no CRD of it there: nothing at all
	tc := newTestController(t, &typ, members)
	tc.Controller.members = listingMembers{Members: members, uid: members.FederationUID()}
	tc.r = tc.newReleaser()
	assert.Equal(t, "cluster c1: its cache of configmaps has not synced", tc.r.WithdrawnLeft())
}
