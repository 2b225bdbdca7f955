package propagation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/controllers/propagation/release"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/tombstone"
)

// grave is the tombstone the apiserver writes for fed deleted ago.
func grave(t *testing.T, typ *federatedtypes.Type, fed *unstructured.Unstructured, ago time.Duration) *corev1.ConfigMap {
	t.Helper()
	r := tombstone.New(typ.Resource.GroupResource(), fed, time.Now().Add(-ago))
	if typ.Name == "secrets" {
		r.SecretType, _, _ = unstructured.NestedString(fed.Object, "type")
	}
	cm := &corev1.ConfigMap{ObjectMeta: r.Meta(), Data: r.Data()}
	cm.UID = types.UID("grave-of-" + string(fed.GetUID()))
	return cm
}

// withTombstones gives the controller an index of tombstones holding graves.
func (tc *testController) withTombstones(t *testing.T, graves ...*corev1.ConfigMap) cache.Indexer {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{release.TombstoneIndex: release.IndexTombstone})
	for _, g := range graves {
		require.NoError(t, idx.Add(g))
	}
	tc.r.UseTombstones(idx)
	// The tombstones the controller deletes leave the informer's cache.
	tc.fedClient.PrependReactor("delete", "configmaps", func(a clienttesting.Action) (bool, runtime.Object, error) {
		d := a.(clienttesting.DeleteAction)
		if obj, ok, _ := idx.GetByKey(d.GetNamespace() + "/" + d.GetName()); ok {
			require.NoError(t, idx.Delete(obj))
		}
		return true, nil, nil
	})
	return idx
}

// deletedTombstones are the names of the tombstones the controller deleted.
func (tc *testController) deletedTombstones() []string {
	var out []string
	for _, a := range tc.fedClient.Actions() {
		if d, ok := a.(clienttesting.DeleteAction); ok && d.GetResource().Resource == "configmaps" && d.GetNamespace() == tombstone.Namespace {
			out = append(out, d.GetName())
		}
	}
	return out
}

func withUID(o *unstructured.Unstructured, uid string) *unstructured.Unstructured {
	o.SetUID(types.UID(uid))
	return o
}

func TestATombstoneDeletesTheCopiesThenItself(t *testing.T) {
	cms := federatedtypes.ByName("configmaps")
	fed := withUID(configMapObj("a"), "uid-1")
	members := testmembers.New([]string{"c1", "c2"})
	members.Put("c1", appliedCopy(t, fed))
	members.Put("c2", appliedCopy(t, fed))
	other := withUID(configMapObj("b"), "uid-2")
	members.Put("c1", appliedCopy(t, other))
	tc := newTestController(t, cms, members) // both gone from the federation
	g := grave(t, cms, fed, 0)
	idx := tc.withTombstones(t, g)

	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"delete"}, members.Actions("c1"), "only a's copy: b has no tombstone")
	assert.Equal(t, []string{"delete"}, members.Actions("c2"))
	assert.Equal(t, []string{g.Name}, tc.deletedTombstones(), "the tombstone goes once every copy is gone")
	assert.Empty(t, idx.List())
	assert.Equal(t, []string{"Normal DeleteInCluster Deleted ConfigMap ns/a in clusters c1, c2"}, tc.events())

	require.NoError(t, tc.sync(t, "ns/b"))
	assert.Equal(t, []string{"delete"}, members.Actions("c1"), "a copy whose object is gone without a tombstone is a stray: never deleted")
}

func TestATombstoneOrphansAdoptedCopiesUnlessAsked(t *testing.T) {
	cms := federatedtypes.ByName("configmaps")
	for _, tt := range []struct {
		name       string
		annotation map[string]string
		want       []string
	}{
		{name: "orphaned", want: []string{"patch:" + string(types.MergePatchType)}},
		{name: "deleted when asked", annotation: map[string]string{federationv1beta1.DeleteAdoptedAnnotation: "true"}, want: []string{"delete"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fed := withUID(configMapObj("a"), "uid-1")
			fed.SetAnnotations(tt.annotation)
			members := testmembers.New([]string{"c1"})
			members.Put("c1", adoptedCopy(t, fed))
			tc := newTestController(t, cms, members)
			tc.withTombstones(t, grave(t, cms, fed, 0))
			require.NoError(t, tc.sync(t, "ns/a"))
			assert.Equal(t, tt.want, members.Actions("c1"))
			assert.Len(t, tc.deletedTombstones(), 1)
		})
	}
}

func TestATombstoneOfAnEarlierObjectLeavesTheNewOnesCopies(t *testing.T) {
	cms := federatedtypes.ByName("configmaps")
	old := withUID(configMapObj("a"), "uid-old")
	now := withUID(configMapObj("a"), "uid-new")
	members := testmembers.New([]string{"c1"})
	members.Put("c1", appliedCopy(t, now))
	tc := newTestController(t, cms, members, now)
	g := grave(t, cms, old, 0)
	tc.withTombstones(t, g)

	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Empty(t, members.Actions("c1"), "the copy is the new object's, in sync")
	assert.Equal(t, []string{g.Name}, tc.deletedTombstones())
}

// A tombstone older than the object whose copies the members hold (a
// backup restored from before that object was made) deletes nothing: the
// copies record the later object's UID. They are strays now, never deleted.
func TestATombstoneLeavesTheCopiesOfALaterObject(t *testing.T) {
	cms := federatedtypes.ByName("configmaps")
	old := withUID(configMapObj("a"), "uid-old")
	later := withUID(configMapObj("a"), "uid-later")
	members := testmembers.New([]string{"c1", "c2"})
	members.Put("c1", appliedCopy(t, later))
	members.Put("c2", appliedCopy(t, old))
	tc := newTestController(t, cms, members) // a is gone from the federation
	g := grave(t, cms, old, 0)
	tc.withTombstones(t, g)

	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Empty(t, members.Actions("c1"), "the later object's copy is kept")
	assert.Equal(t, []string{"delete"}, members.Actions("c2"), "the recorded object's copy goes")
	assert.Equal(t, []string{g.Name}, tc.deletedTombstones())
}

func TestATombstoneWaitsForTheObjectToGo(t *testing.T) {
	cms := federatedtypes.ByName("configmaps")
	fed := withUID(configMapObj("a"), "uid-1")
	members := testmembers.New([]string{"c1"})
	members.Put("c1", appliedCopy(t, fed))

	// Just deleted: our cache has not seen it go yet, and holds a version
	// whose copy is out of date. It is not reconciled: no copy written, no
	// status written.
	changed := withUID(configMapObj("a"), "uid-1")
	require.NoError(t, unstructured.SetNestedField(changed.Object, "changed", "data", "key"))
	tc := newTestController(t, cms, members, changed)
	tc.withTombstones(t, grave(t, cms, changed, 0))
	require.NoError(t, tc.Sync(t.Context(), "ns/a"))
	for _, c := range tc.w.Clusters() {
		tc.w.Drain(t.Context(), c)
	}
	tc.afterWrites()
	assert.Empty(t, members.Actions("c1"))
	assert.Empty(t, tc.deletedTombstones(), "kept")
	assert.Empty(t, tc.fedClient.Actions(), "no status written for an object being deleted")

	// Held by another's finalizer, long after: kept until it goes.
	held := deleting(withUID(configMapObj("a", "example.com/keep"), "uid-1"), time.Hour)
	tc = newTestController(t, cms, members, held)
	tc.withTombstones(t, grave(t, cms, held, time.Hour))
	require.NoError(t, tc.Sync(t.Context(), "ns/a"))
	assert.Empty(t, members.Actions("c1"))
	assert.Empty(t, tc.deletedTombstones(), "kept")

	// Still there long after, as the federation says: the delete failed.
	tc = newTestController(t, cms, members, fed)
	g := grave(t, cms, fed, time.Hour)
	tc.withTombstones(t, g)
	require.NoError(t, tc.Sync(t.Context(), "ns/a"))
	assert.Empty(t, members.Actions("c1"), "its copies stay")
	assert.Equal(t, []string{g.Name}, tc.deletedTombstones())
}

func TestATombstoneWaitsForAClusterThatIsAway(t *testing.T) {
	cms := federatedtypes.ByName("configmaps")
	fed := withUID(configMapObj("a"), "uid-1")

	members := testmembers.New([]string{"c1"}, "c9")
	members.Put("c1", appliedCopy(t, fed))
	tc := newTestController(t, cms, members)
	tc.withTombstones(t, grave(t, cms, fed, 0))
	require.NoError(t, tc.Sync(t.Context(), "ns/a"))
	for _, c := range tc.w.Clusters() {
		tc.w.Drain(t.Context(), c)
	}
	tc.afterWrites()
	require.NoError(t, tc.Sync(t.Context(), "ns/a"))
	assert.Equal(t, []string{"delete"}, members.Actions("c1"))
	assert.Empty(t, tc.deletedTombstones(), "c9 may come back within the deletion wait")

	members = testmembers.New([]string{"c1"}, "c9")
	tc = newTestController(t, cms, members)
	tc.r.Start(time.Now().Add(-2 * time.Minute))
	g := grave(t, cms, fed, 2*time.Minute)
	tc.withTombstones(t, g)
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{g.Name}, tc.deletedTombstones())
	assert.Equal(t, []string{"Warning DeleteInClusterFailed Gave up deleting ConfigMap ns/a in cluster c9 after 1m0s: the cluster is not Ready; delete it there by hand"},
		tc.events())

	// Deleted long ago, but we only just started: the wait counts from now.
	members = testmembers.New([]string{"c1"}, "c9")
	tc = newTestController(t, cms, members)
	tc.r.Start(time.Now())
	tc.withTombstones(t, grave(t, cms, fed, time.Hour))
	require.NoError(t, tc.Sync(t.Context(), "ns/a"))
	assert.Empty(t, tc.deletedTombstones())
}

func TestTombstonesThatHaveNothingToDo(t *testing.T) {
	secrets := federatedtypes.ByName("secrets")
	release := secretObj("sh.helm.release.v1.web.v1", federatedtypes.HelmReleaseSecretType)
	release.SetUID("uid-r")
	members := testmembers.New([]string{"c1"}, "c9")
	tc := newTestController(t, secrets, members)
	g := grave(t, secrets, release, 0)
	tc.withTombstones(t, g)
	require.NoError(t, tc.sync(t, "ns/sh.helm.release.v1.web.v1"))
	assert.Equal(t, []string{g.Name}, tc.deletedTombstones(), "a local object's, at once: c9 being away does not matter")
	assert.Empty(t, tc.events())

	system := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret"}}
	system.SetNamespace("kube-system")
	system.SetName("x")
	system.SetUID("uid-s")
	tc = newTestController(t, secrets, members)
	g = grave(t, secrets, system, 0)
	tc.withTombstones(t, g)
	require.NoError(t, tc.sync(t, "kube-system/x"))
	assert.Equal(t, []string{g.Name}, tc.deletedTombstones(), "never propagated: nothing to delete")
	assert.Empty(t, members.Actions("c1"))
}

func TestACopyWithATombstoneIsNoStray(t *testing.T) {
	cms := federatedtypes.ByName("configmaps")
	a, b := withUID(configMapObj("a"), "uid-a"), withUID(configMapObj("b"), "uid-b")
	fm := testmembers.New([]string{"c1"})
	fm.Put("c1", appliedCopy(t, a))
	fm.Put("c1", appliedCopy(t, b))
	tc := newTestController(t, cms, fm)
	tc.Controller.members = listingMembers{Members: fm, uid: "fed-uid"}
	tc.w = tc.newWriter()
	tc.r = tc.newReleaser()
	tc.withTombstones(t, grave(t, cms, a, 0))
	strays := tc.r.Strays()["c1"]
	require.Len(t, strays, 1)
	assert.Equal(t, "b", strays[0].GetName())
}

func TestAnHPAsTombstoneGivesItsTargetItsReplicasBack(t *testing.T) {
	hpas := federatedtypes.ByName("horizontalpodautoscalers")
	hpa, target := hpaOfAMarkedTarget()

	tc := newTestController(t, hpas, testmembers.New([]string{"c1"}))
	deployments := federatedtypes.ByName("deployments").Resource
	require.NoError(t, tc.fedClient.Tracker().Create(deployments, target, "ns"))
	g := grave(t, hpas, hpa, 0)
	g.Data = tombstoneWithTarget(t, hpas, hpa)
	tc.withTombstones(t, g)

	require.NoError(t, tc.sync(t, "ns/web"))
	got, err := tc.fedClient.Resource(deployments).Namespace("ns").Get(t.Context(), "web", metav1.GetOptions{})
	require.NoError(t, err)
	assert.NotContains(t, got.GetAnnotations(), federationv1beta1.HPATargetClustersAnnotation, "the members' HPAs no longer own its replicas")
	assert.Equal(t, []string{g.Name}, tc.deletedTombstones())
}

// hpaOfAMarkedTarget is an HPA of Deployment web, and web marked as the
// target of HPAs in c1.
func hpaOfAMarkedTarget() (hpa, target *unstructured.Unstructured) {
	hpa = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
		"spec": map[string]any{"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}}}
	hpa.SetNamespace("ns")
	hpa.SetName("web")
	hpa.SetUID("uid-hpa")
	target = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}
	target.SetNamespace("ns")
	target.SetName("web")
	target.SetAnnotations(map[string]string{federationv1beta1.HPATargetClustersAnnotation: `{"Names":["c1"]}`})
	return hpa, target
}

// tombstoneWithTarget is the data the apiserver writes for a deleted HPA.
func tombstoneWithTarget(t *testing.T, typ *federatedtypes.Type, hpa *unstructured.Unstructured) map[string]string {
	t.Helper()
	r := tombstone.New(typ.Resource.GroupResource(), hpa, time.Now())
	kind, _, _ := unstructured.NestedString(hpa.Object, "spec", "scaleTargetRef", "kind")
	name, _, _ := unstructured.NestedString(hpa.Object, "spec", "scaleTargetRef", "name")
	r.ScaleTarget = &tombstone.ScaleTarget{Kind: kind, Name: name}
	return r.Data()
}

// An HPA deleted with the orphan policy leaves its copies in the members,
// which keep scaling the target there: the target stays marked theirs.
func TestAnOrphanedHPALeavesItsTargetToTheMembersHPAs(t *testing.T) {
	hpas := federatedtypes.ByName("horizontalpodautoscalers")
	hpa, target := hpaOfAMarkedTarget()
	marked := target.GetAnnotations()
	deployments := federatedtypes.ByName("deployments").Resource

	for _, tt := range []struct {
		finalizer string
		want      map[string]string
	}{
		{metav1.FinalizerOrphanDependents, marked},
		{metav1.FinalizerDeleteDependents, map[string]string{}},
	} {
		t.Run(tt.finalizer, func(t *testing.T) {
			fed := deleting(hpa.DeepCopy(), 0)
			fed.SetFinalizers([]string{tt.finalizer})
			tc := newTestController(t, hpas, testmembers.New([]string{"c1"}), fed)
			require.NoError(t, tc.fedClient.Tracker().Create(deployments, target.DeepCopy(), "ns"))
			require.NoError(t, tc.sync(t, "ns/web"))
			got, err := tc.fedClient.Resource(deployments).Namespace("ns").Get(t.Context(), "web", metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.GetAnnotations())
		})
	}
}
