package propagation

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/membercluster"
)

var applyVerb = "patch:" + string(types.ApplyPatchType)

// membersOwn puts obj in c1 as an object the federation's caches do not
// see: the member's own, or another federation's.
func membersOwn(t *testing.T, members *testmembers.Members, obj *unstructured.Unstructured) {
	t.Helper()
	obj.SetUID("their-uid")
	require.NoError(t, members.Clients["c1"].Tracker().Add(obj))
}

// lastApplied is the object of the last apply to a member.
func lastApplied(t *testing.T, members *testmembers.Members, cluster string) *unstructured.Unstructured {
	t.Helper()
	var out *unstructured.Unstructured
	for _, a := range members.Clients[cluster].Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok && p.GetPatchType() == types.ApplyPatchType {
			out = &unstructured.Unstructured{}
			require.NoError(t, out.UnmarshalJSON(p.GetPatch()))
		}
	}
	require.NotNil(t, out, "nothing applied to %s", cluster)
	return out
}

func TestCopiesCarryTheFederationsUID(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
	require.NoError(t, tc.sync(t, "ns/a"))
	got, ok := members.Get("c1", federatedtypes.ByName("configmaps").Resource, "ns", "a")
	require.True(t, ok)
	assert.Equal(t, "fed", got.GetLabels()[federationv1beta1.FederationLabel])
	assert.Equal(t, "fed-uid", got.GetLabels()[federationv1beta1.FederationUIDLabel])

	// A copy written before the UID label: ours, and labelled at its next write.
	legacy := configMapObj("b", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
	members = testmembers.New([]string{"c1"})
	old, _, err := plan.Desired(federatedtypes.ByName("configmaps"), legacy, "fed", "")
	require.NoError(t, err)
	old.SetResourceVersion("1")
	members.Put("c1", old)
	tc = newTestController(t, federatedtypes.ByName("configmaps"), members, legacy)
	require.NoError(t, tc.sync(t, "ns/b"))
	assert.Equal(t, []string{applyVerb}, members.Actions("c1"))
	assert.Equal(t, "fed-uid", lastApplied(t, members, "c1").GetLabels()[federationv1beta1.FederationUIDLabel])
}

func TestAnotherFederationsObjectIsLeftAlone(t *testing.T) {
	for _, tt := range []struct {
		name    string
		labels  map[string]string
		inCache bool
		calls   []string
		other   string
	}{
		{name: "by name", labels: map[string]string{federationv1beta1.FederationLabel: "fed2"},
			calls: []string{"create", "get"}, other: `federation "fed2"`},
		{name: "by UID, in our cache", labels: map[string]string{federationv1beta1.FederationLabel: "fed", federationv1beta1.FederationUIDLabel: "other-uid"},
			inCache: true, other: `federation "fed" with UID other-uid`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			members := testmembers.New([]string{"c1", "c2"})
			theirs := configMapObj("a")
			theirs.SetLabels(tt.labels)
			membersOwn(t, members, theirs)
			if tt.inCache {
				members.Put("c1", theirs)
			}
			tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
			err := tc.sync(t, "ns/a")
			require.ErrorContains(t, err, "ConfigMap ns/a in cluster c1 belongs to "+tt.other)
			assert.Equal(t, tt.calls, members.Actions("c1"), "nothing written")
			assert.Equal(t, []string{"create"}, members.Actions("c2"))
			assert.Equal(t, []string{
				"Normal CreateInCluster Created ConfigMap ns/a in cluster c2",
				"Warning ConflictInCluster ConfigMap ns/a in cluster c1 belongs to " + tt.other + ": left as it is",
			}, tc.events())

			// Deleting the federated object leaves it too.
			require.NoError(t, tc.indexer.Update(deleting(configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters), 0)))
			require.NoError(t, tc.sync(t, "ns/a"))
			for _, a := range members.Actions("c1") {
				assert.NotContains(t, []string{"delete", "patch:" + string(types.MergePatchType)}, a)
			}
			assert.Contains(t, members.Actions("c2"), "delete")
		})
	}
}

func TestAMembersOwnObjectIsNotAdoptedUnlessAsked(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	theirs := configMapObj("a")
	theirs.Object["data"] = map[string]any{"k": "theirs"}
	membersOwn(t, members, theirs)
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
	require.ErrorContains(t, tc.sync(t, "ns/a"), "exists in cluster c1 and was not created by this federation")
	assert.Equal(t, []string{"create", "get"}, members.Actions("c1"), "no write")
	events := tc.events()
	require.Len(t, events, 1)
	assert.True(t, strings.HasPrefix(events[0], "Warning ConflictInCluster ConfigMap ns/a exists in cluster c1 and was not created by this federation"), events[0])
	assert.Contains(t, events[0], "federation.kubernetes.io/conflict-resolution=adopt")

	// Tried again: read, not created again, and not told again.
	err := tc.w.WriteOnceForTesting(context.Background(), "c1", compareTask(t, tc, "ns/a", "c1"))
	require.Error(t, err)
	assert.Equal(t, []string{"create", "get", "get"}, members.Actions("c1"))
	assert.Empty(t, tc.events())
}

// compareTask is the task the reconcile gives a cluster for key, judged
// as it judges.
func compareTask(t *testing.T, tc *testController, objKey, cluster string) writer.Task {
	t.Helper()
	fed, err := tc.objs.Get(fedobject.SplitKey(objKey))
	require.NoError(t, err)
	d, h, err := plan.Desired(tc.typ, fed, "fed", "fed-uid")
	require.NoError(t, err)
	cur, ok := tc.members.Get(cluster, tc.typ.Resource, fed.GetNamespace(), fed.GetName())
	if !ok {
		cur = nil
	}
	last, known := tc.w.Last(cluster, objKey)
	v := plan.Judge(plan.Observed{Placed: true, Cur: cur, Last: last, Known: known, Desired: d, Hash: h})
	return writer.Task{Fed: fed, Desired: d, Hash: h, Basis: plan.Basis(cur, last, known), InSync: v.InSync}
}

func TestAMembersOwnObjectIsAdoptedWhenAsked(t *testing.T) {
	for _, tt := range []struct {
		name       string
		annotation string
		flag       string
	}{
		{name: "by the annotation", annotation: federationv1beta1.ConflictResolutionAdopt},
		{name: "by the controller manager's default", flag: federationv1beta1.ConflictResolutionAdopt},
	} {
		t.Run(tt.name, func(t *testing.T) {
			members := testmembers.New([]string{"c1"})
			membersOwn(t, members, configMapObj("a"))
			fed := configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
			if tt.annotation != "" {
				fed.SetAnnotations(map[string]string{federationv1beta1.ConflictResolutionAnnotation: tt.annotation})
			}
			tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
			tc.opts.DefaultConflictResolution = tt.flag
			tc.w = tc.newWriter()
			tc.r = tc.newReleaser()
			require.NoError(t, tc.sync(t, "ns/a"))
			assert.Equal(t, []string{"create", "get", applyVerb}, members.Actions("c1"))
			applied := lastApplied(t, members, "c1")
			assert.Equal(t, "true", applied.GetAnnotations()[federationv1beta1.AdoptedAnnotation])
			assert.NotContains(t, applied.GetAnnotations(), federationv1beta1.ConflictResolutionAnnotation, "said to the federation, not the members")
			assert.Equal(t, []string{"Normal AdoptInCluster Adopted the existing ConfigMap ns/a in cluster c1"}, tc.events())

			// At rest: the mark is part of what the cluster holds.
			require.NoError(t, tc.sync(t, "ns/a"))
			assert.Len(t, members.Actions("c1"), 3, "nothing more written")
		})
	}
	t.Run("abort on the object wins over the default", func(t *testing.T) {
		members := testmembers.New([]string{"c1"})
		membersOwn(t, members, configMapObj("a"))
		fed := configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
		fed.SetAnnotations(map[string]string{federationv1beta1.ConflictResolutionAnnotation: federationv1beta1.ConflictResolutionAbort})
		tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
		tc.opts.DefaultConflictResolution = federationv1beta1.ConflictResolutionAdopt
		tc.w = tc.newWriter()
		tc.r = tc.newReleaser()
		require.Error(t, tc.sync(t, "ns/a"))
		assert.Equal(t, []string{"create", "get"}, members.Actions("c1"))
	})
}

func TestAConflictGivesPropagatedFalse(t *testing.T) {
	members := testmembers.New([]string{"c1", "c2"})
	theirs := deploymentObj()
	theirs.SetFinalizers(nil)
	membersOwn(t, members, theirs)
	tc := newTestController(t, federatedtypes.ByName("deployments"), members, deploymentObj())
	require.Error(t, tc.sync(t, "ns/d"))
	var last *unstructured.Unstructured
	for _, a := range tc.fedClient.Actions() {
		if u, ok := a.(clienttesting.UpdateAction); ok && a.GetSubresource() == "status" {
			last = u.GetObject().(*unstructured.Unstructured)
		}
	}
	require.NotNil(t, last)
	conditions, _, _ := unstructured.NestedSlice(last.Object, "status", "conditions")
	var propagated map[string]any
	for _, c := range conditions {
		if c.(map[string]any)["type"] == PropagatedCondition {
			propagated = c.(map[string]any)
		}
	}
	require.NotNil(t, propagated)
	assert.Equal(t, "False", propagated["status"])
	assert.Contains(t, propagated["message"], "Deployment ns/d exists in cluster c1 and was not created by this federation")
}

// adoptedCopy is what c1 holds of fed after adopting it.
func adoptedCopy(t *testing.T, fed *unstructured.Unstructured) *unstructured.Unstructured {
	d, _, err := plan.Desired(federatedtypes.ByName("configmaps"), fed, "fed", "fed-uid")
	require.NoError(t, err)
	d, _, err = plan.WithAdopted(federatedtypes.ByName("configmaps"), d)
	require.NoError(t, err)
	d.SetResourceVersion("1")
	return d
}

func TestDeletionDeletesOnlyWhatWeCreated(t *testing.T) {
	for _, tt := range []struct {
		name        string
		adopted     bool
		annotations map[string]string
		want        []string
		event       string
	}{
		{name: "created: deleted", want: []string{"delete"}, event: "Normal DeleteInCluster Deleted ConfigMap ns/a in cluster c1"},
		{name: "adopted: orphaned", adopted: true, want: []string{"patch:" + string(types.MergePatchType)},
			event: "Normal OrphanInCluster Left the adopted ConfigMap ns/a in cluster c1 to the member"},
		{name: "adopted, deletion asked for: deleted", adopted: true, annotations: map[string]string{federationv1beta1.DeleteAdoptedAnnotation: "true"},
			want: []string{"delete"}, event: "Normal DeleteInCluster Deleted ConfigMap ns/a in cluster c1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			members := testmembers.New([]string{"c1"})
			cp := appliedCopy(t, configMapObj("a"))
			if tt.adopted {
				cp = adoptedCopy(t, configMapObj("a"))
			}
			members.Put("c1", cp)
			fed := deleting(configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters), 0)
			fed.SetAnnotations(tt.annotations)
			tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
			require.NoError(t, tc.sync(t, "ns/a"))
			assert.Equal(t, tt.want, members.Actions("c1"))
			assert.Equal(t, []string{tt.event}, tc.events())
		})
	}
}

func TestUnplacingAnAdoptedCopyOrphansIt(t *testing.T) {
	fed := configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
	fed.SetAnnotations(map[string]string{federationv1beta1.ClusterSelectorAnnotation: `[{"key":"cluster","operator":"==","values":["2"]}]`})
	members := testmembers.New([]string{"c1"})
	members.Ready[0].Labels = map[string]string{"cluster": "1"}
	members.Put("c1", adoptedCopy(t, configMapObj("a")))
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"patch:" + string(types.MergePatchType)}, members.Actions("c1"))
}

func fedNamespace(name string, finalizers ...string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
	o.SetName(name)
	o.SetFinalizers(finalizers)
	return o
}

func TestDeletingANamespaceLeavesOneWithForeignObjects(t *testing.T) {
	members := testmembers.New([]string{"c1", "c2"})
	for _, c := range []string{"c1", "c2"} {
		ns, _, err := plan.Desired(federatedtypes.ByName("namespaces"), fedNamespace("team"), "fed", "fed-uid")
		require.NoError(t, err)
		members.Put(c, ns)
	}
	ours := map[string]string{federationv1beta1.FederationLabel: "fed", federationv1beta1.FederationUIDLabel: "fed-uid"}
	object := func(resource, name string, labels map[string]string) membercluster.Object {
		return membercluster.Object{Resource: schema.GroupVersionResource{Version: "v1", Resource: resource},
			PartialObjectMetadata: metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, Labels: labels}}}
	}
	members.InNamespace = map[string][]membercluster.Object{
		// What the member makes itself and our copies do not count.
		"c2": {object("configmaps", "kube-root-ca.crt", nil), object("serviceaccounts", "default", nil), object("events", "e", nil),
			object("configmaps", "ours", ours)},
		"c1": {object("configmaps", "ours", ours), object("configmaps", "theirs", nil),
			object("secrets", "fed2s", map[string]string{federationv1beta1.FederationLabel: "fed2"})},
	}
	for i := range 11 {
		members.InNamespace["c1"] = append(members.InNamespace["c1"], object("services", "s"+string(rune('a'+i)), nil))
	}
	tc := newTestController(t, federatedtypes.ByName("namespaces"), members, deleting(fedNamespace("team", federationv1beta1.FinalizerDeleteFromUnderlyingClusters), 0))
	require.NoError(t, tc.sync(t, "team"))
	assert.Equal(t, []string{"patch:" + string(types.MergePatchType)}, members.Actions("c1"), "orphaned")
	assert.Equal(t, []string{"delete"}, members.Actions("c2"))
	assert.Equal(t, []string{
		"Normal DeleteInCluster Deleted Namespace team in cluster c2",
		"Warning OrphanInCluster Left Namespace team in cluster c1 to the member instead of deleting it: it holds objects the federation did not create: " +
			"configmaps/theirs, secrets/fed2s, services/sa, services/sb, services/sc, services/sd, services/se, services/sf, services/sg, services/sh and 3 more",
	}, tc.events())
}

func TestTheDefaultNamespaceIsNeverWritten(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	tc := newTestController(t, federatedtypes.ByName("namespaces"), members, fedNamespace("default", federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
	require.NoError(t, tc.sync(t, "default"))
	assert.Empty(t, members.Actions("c1"))
	require.NoError(t, tc.indexer.Update(deleting(fedNamespace("default", federationv1beta1.FinalizerDeleteFromUnderlyingClusters), 0)))
	require.NoError(t, tc.sync(t, "default"))
	assert.Empty(t, members.Actions("c1"))
	assert.Empty(t, tc.events())

	// Objects in it propagate as before.
	cm := configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
	cm.SetNamespace("default")
	tcm := newTestController(t, federatedtypes.ByName("configmaps"), members, cm)
	require.NoError(t, tcm.sync(t, "default/a"))
	assert.Equal(t, []string{"create"}, members.Actions("c1"))
}

func TestTheFieldsOfOurCreateGoToOurApplies(t *testing.T) {
	fed := configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
	members := testmembers.New([]string{"c1"})
	members.Put("c1", appliedCopy(t, fed))
	// The member answers with our create's Update entry still there.
	first := true
	members.Clients["c1"].PrependReactor("patch", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if p := a.(clienttesting.PatchAction); p.GetPatchType() != types.ApplyPatchType || !first {
			return false, nil, nil
		}
		first = false
		out := appliedCopy(t, fed)
		out.SetManagedFields([]metav1.ManagedFieldsEntry{
			{Manager: writer.FieldManager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:k":{}}}`)}},
		})
		return true, out, nil
	})
	changed := fed.DeepCopy()
	changed.Object["data"] = map[string]any{"k2": "v"}
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, changed)
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{applyVerb, "patch:" + string(types.JSONPatchType), applyVerb}, members.Actions("c1"))
	var patch []map[string]any
	require.NoError(t, json.Unmarshal(members.Clients["c1"].Actions()[1].(clienttesting.PatchAction).GetPatch(), &patch))
	require.Len(t, patch, 2)
	entries := patch[0]["value"].([]any)
	require.Len(t, entries, 1)
	assert.Equal(t, "Apply", entries[0].(map[string]any)["operation"], "our create's entry became our apply's")
}

func TestTheMembersDefaultServiceAccountIsAdoptedUnlessTheObjectSaysAbort(t *testing.T) {
	accounts := federatedtypes.ByName("serviceaccounts")
	account := func(name string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount",
			"imagePullSecrets": []any{map[string]any{"name": "registry"}}}}
		o.SetName(name)
		o.SetNamespace("ns")
		return o
	}
	t.Run("default", func(t *testing.T) {
		members := testmembers.New([]string{"c1"})
		membersOwn(t, members, account("default"))
		tc := newTestController(t, accounts, members, account("default"))
		require.NoError(t, tc.sync(t, "ns/default"))
		// (The first get: its absent pull Secret, which it may name.)
		assert.Equal(t, []string{"get", "create", "get", applyVerb}, members.Actions("c1"), "taken over without a conflict")
		assert.Equal(t, "true", lastApplied(t, members, "c1").GetAnnotations()[federationv1beta1.AdoptedAnnotation],
			"adopted: deleting the federated one gives the member its own back")
	})
	t.Run("default with abort", func(t *testing.T) {
		members := testmembers.New([]string{"c1"})
		membersOwn(t, members, account("default"))
		fed := account("default")
		fed.SetAnnotations(map[string]string{federationv1beta1.ConflictResolutionAnnotation: federationv1beta1.ConflictResolutionAbort})
		tc := newTestController(t, accounts, members, fed)
		require.ErrorContains(t, tc.sync(t, "ns/default"), "was not created by this federation")
		assert.Equal(t, []string{"get", "create", "get"}, members.Actions("c1"))
	})
	t.Run("another account of the member's", func(t *testing.T) {
		members := testmembers.New([]string{"c1"})
		membersOwn(t, members, account("builder"))
		tc := newTestController(t, accounts, members, account("builder"))
		require.ErrorContains(t, tc.sync(t, "ns/builder"), "was not created by this federation")
	})
}
