package propagation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-base/metrics/legacyregistry"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/clusterselector"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/membercluster"
)

// labelledNamespaces are fakeMembers whose namespaces cache holds, as the
// real one, only the member namespaces carrying our label: those listed.
type labelledNamespaces struct {
	*testmembers.Members
	labelled map[string]bool // cluster/namespace
}

func (m *labelledNamespaces) Get(cluster string, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, bool) {
	if gvr == membercluster.NamespacesResource {
		if !m.labelled[cluster+"/"+name] {
			return nil, false
		}
		return namespaceObj(name), true
	}
	return m.Members.Get(cluster, gvr, ns, name)
}

func namespaceObj(name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
	o.SetName(name)
	return o
}

// withNamespaceCache makes the controller's members cache only the
// labelled namespaces.
func (tc *testController) withNamespaceCache(labelled ...string) *labelledNamespaces {
	m := &labelledNamespaces{Members: tc.members, labelled: map[string]bool{}}
	for _, l := range labelled {
		m.labelled[l] = true
	}
	tc.Controller.members = m
	tc.w = tc.newWriter()
	tc.r = tc.newReleaser()
	return m
}

// addFederatedNamespace puts namespace "ns" in the federation, with the
// annotations given.
func (tc *testController) addFederatedNamespace(t *testing.T, annotations map[string]string) {
	t.Helper()
	ns := namespaceObj("ns")
	ns.SetAnnotations(annotations)
	require.NoError(t, tc.fedClient.Tracker().Add(ns))
}

// addMemberNamespace puts namespace "ns", without our label, in a member.
func addMemberNamespace(t *testing.T, members *testmembers.Members, cluster string, terminating bool) {
	t.Helper()
	ns := namespaceObj("ns")
	if terminating {
		now := metav1.Now()
		ns.SetDeletionTimestamp(&now)
		ns.Object["status"] = map[string]any{"phase": "Terminating"}
	}
	require.NoError(t, members.Clients[cluster].Tracker().Add(ns))
}

// prevented reads federation_sync_unplace_prevented_total.
func prevented(t *testing.T, cluster, typ string) float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != "federation_sync_unplace_prevented_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if got["cluster"] == cluster && got["type"] == typ {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func selectCluster(n string) map[string]string {
	return map[string]string{clusterselector.Annotation: `[{"key":"cluster","operator":"==","values":["` + n + `"]}]`}
}

func TestANamespaceMissingFromTheCacheButThereLiveKeepsItsCopies(t *testing.T) {
	fed := configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
	members := testmembers.New([]string{"c1"})
	members.Put("c1", appliedCopy(t, fed))
	addMemberNamespace(t, members, "c1", false) // its label taken off
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
	tc.addFederatedNamespace(t, nil)
	tc.withNamespaceCache()
	before := prevented(t, "c1", "configmaps")

	require.NoError(t, tc.sync(t, "ns/a"))
	// Placement reads the namespace live and keeps the cluster: the copy is
	// not even offered for removal.
	assert.Equal(t, []string{"get"}, members.Actions("c1"), "the namespace read, no delete")
	assert.Equal(t, before, prevented(t, "c1", "configmaps"))
	assert.Empty(t, tc.events())
}

func TestAClusterDeselectedInTheCacheButSelectedLiveKeepsItsCopy(t *testing.T) {
	fed := configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
	members := testmembers.New([]string{"c1", "c2"})
	members.Ready[0].Labels = map[string]string{"cluster": "1"}
	members.Ready[1].Labels = map[string]string{"cluster": "2"}
	// Our cache has a selection of c2 alone that the federation apiserver
	// no longer holds.
	stale := fed.DeepCopy()
	stale.SetAnnotations(selectCluster("2"))
	members.Put("c1", appliedCopy(t, fed))
	members.Put("c2", appliedCopy(t, stale))
	addMemberNamespace(t, members, "c1", false)
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
	tc.addFederatedNamespace(t, nil)
	tc.withNamespaceCache("c1/ns", "c2/ns")
	require.NoError(t, tc.indexer.Update(stale))
	before := prevented(t, "c1", "configmaps")

	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"get"}, members.Actions("c1"), "no delete")
	assert.Empty(t, members.Actions("c2"))
	assert.Equal(t, before+1, prevented(t, "c1", "configmaps"))
}

func TestUnplaceConfirmedLiveDeletes(t *testing.T) {
	for _, tt := range []struct {
		name string
		// selector of the federated object, and of the federated namespace.
		selector, nsSelector map[string]string
		// memberNamespace: "" absent, "there" or "terminating".
		memberNamespace string
		wantActions     []string
	}{
		{name: "the cluster is no longer selected", selector: selectCluster("2"), memberNamespace: "there", wantActions: []string{"delete"}},
		{name: "the member namespace is gone", wantActions: []string{"get", "get", "delete"}},
		{name: "the member namespace is terminating", memberNamespace: "terminating", wantActions: []string{"get", "get", "delete"}},
		{name: "the federated namespace does not select the cluster", nsSelector: selectCluster("2"), memberNamespace: "there", wantActions: []string{"delete"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fed := configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
			fed.SetAnnotations(tt.selector)
			members := testmembers.New([]string{"c1"})
			members.Ready[0].Labels = map[string]string{"cluster": "1"}
			members.Put("c1", appliedCopy(t, configMapObj("a")))
			if tt.memberNamespace != "" {
				addMemberNamespace(t, members, "c1", tt.memberNamespace == "terminating")
			}
			tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
			tc.addFederatedNamespace(t, tt.nsSelector)
			tc.withNamespaceCache()
			before := prevented(t, "c1", "configmaps")

			require.NoError(t, tc.sync(t, "ns/a"))
			assert.Equal(t, tt.wantActions, members.Actions("c1"))
			assert.Equal(t, []string{"Normal DeleteInCluster Deleted ConfigMap ns/a in cluster c1: no longer selected"}, tc.events())
			assert.Equal(t, before, prevented(t, "c1", "configmaps"))
		})
	}
}

func TestUnplaceOfAnObjectBeingDeletedIsLeftToItsDeletion(t *testing.T) {
	fed := configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
	fed.SetAnnotations(selectCluster("2"))
	members := testmembers.New([]string{"c1"})
	members.Put("c1", appliedCopy(t, fed))
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
	live := deleting(fed.DeepCopy(), 0)
	live.SetFinalizers([]string{federationv1beta1.FinalizerDeleteFromUnderlyingClusters, metav1.FinalizerOrphanDependents})
	require.NoError(t, tc.fedClient.Tracker().Update(federatedtypes.ByName("configmaps").Resource, live, "ns"))

	require.NoError(t, tc.w.WriteOnceForTesting(t.Context(), "c1", writer.Task{Action: writer.Unplace, Fed: fed}))
	assert.Empty(t, members.Actions("c1"), "an orphaning deletion keeps the copy")
}
