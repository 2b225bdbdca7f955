package propagation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer/guard"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/memberrbac"
	"github.com/federation-v1/federation/pkg/queueworker"
)

// memberNamespaceLabelled puts a member's own namespace ns in cluster c1's
// fake client, with labels, out of our cache.
func memberNamespaceLabelled(t *testing.T, members *testmembers.Members, name string, labels map[string]string) {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
	ns.SetName(name)
	ns.SetLabels(labels)
	members.ForeignNamespaces = append(members.ForeignNamespaces, "c1/"+name)
	require.NoError(t, members.Clients["c1"].Tracker().Add(ns))
}

func TestNothingIsWrittenInAMemberNamespaceTheFederationDoesNotOwn(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	memberNamespaceLabelled(t, members, "ns", map[string]string{"team": "payments"})
	fed := configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
	fed.SetAnnotations(map[string]string{federationv1beta1.ConflictResolutionAnnotation: federationv1beta1.ConflictResolutionAdopt})
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
	tc.addFederatedNamespace(t, nil)

	err := tc.sync(t, "ns/a")
	require.ErrorContains(t, err, "namespace ns in cluster c1 was neither created by federation fed nor adopted for it")
	assert.Empty(t, writesTo(members, "c1"), "nothing written, adoption asked or not")
	events := tc.events()
	require.Len(t, events, 1)
	assert.True(t, strings.HasPrefix(events[0], "Warning "+guard.ReasonNamespaceNotOurs+" ConfigMap ns/a not written in cluster c1"), events[0])

	// Tried again: the verdict is remembered, and not told again.
	reads := len(members.Actions("c1"))
	err = tc.w.WriteOnceForTesting(context.Background(), "c1", compareTask(t, tc, "ns/a", "c1"))
	require.Error(t, err)
	assert.Len(t, members.Actions("c1"), reads, "not even read")
	assert.Empty(t, tc.events())
}

func TestANamespaceAdoptedAtJoinIsWrittenIn(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	memberNamespaceLabelled(t, members, "ns", map[string]string{memberrbac.AdoptedByLabel("fed"): "true"})
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
	tc.addFederatedNamespace(t, nil)
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, []string{"create"}, writesTo(members, "c1"))

	// Another federation's adoption is not ours.
	members = testmembers.New([]string{"c1"})
	memberNamespaceLabelled(t, members, "ns", map[string]string{memberrbac.AdoptedByLabel("fed2"): "true"})
	tc = newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
	tc.addFederatedNamespace(t, nil)
	require.Error(t, tc.sync(t, "ns/a"))
	assert.Empty(t, writesTo(members, "c1"))
}

// writesTo are the member calls to cluster that are not reads.
func writesTo(members *testmembers.Members, cluster string) []string {
	var out []string
	for _, a := range members.Actions(cluster) {
		if a != "get" && a != "list" {
			out = append(out, a)
		}
	}
	return out
}

func TestAnAdoptedNamespaceIsMarkedAdoptedBy(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	members.ForeignNamespaces = []string{"c1/team-x"}
	membersOwn(t, members, fedNamespace("team-x"))
	fed := fedNamespace("team-x", federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
	fed.SetAnnotations(map[string]string{federationv1beta1.ConflictResolutionAnnotation: federationv1beta1.ConflictResolutionAdopt})
	tc := newTestController(t, federatedtypes.Namespaces, members, fed)
	require.NoError(t, tc.sync(t, "team-x"))
	applied := lastApplied(t, members, "c1")
	assert.Equal(t, "true", applied.GetLabels()[memberrbac.AdoptedByLabel("fed")])
	assert.NotContains(t, applied.GetLabels(), memberrbac.CreatedByLabel)
}

func TestAMemberNamespaceAdoptedAtJoinIsTakenOverByItsFederatedNamespace(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	theirs := fedNamespace("team-x")
	theirs.SetLabels(map[string]string{memberrbac.AdoptedByLabel("fed"): "true"})
	members.ForeignNamespaces = []string{"c1/team-x"}
	membersOwn(t, members, theirs)
	tc := newTestController(t, federatedtypes.Namespaces, members, fedNamespace("team-x", federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
	require.NoError(t, tc.sync(t, "team-x"), "no annotation needed: the member's admin adopted it")
	assert.Equal(t, "true", lastApplied(t, members, "c1").GetAnnotations()[federationv1beta1.AdoptedAnnotation])
}

func TestWhatAMembersControllerKeepsUpIsNeverAdopted(t *testing.T) {
	for _, tt := range []struct {
		name   string
		typ    string
		member *unstructured.Unstructured
		why    string
	}{
		{"the root CA ConfigMap", "configmaps", configMapObj("kube-root-ca.crt"), "root CA publisher"},
		{"an owned ConfigMap", "configmaps", func() *unstructured.Unstructured {
			o := configMapObj("a")
			o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "p-uid"}})
			return o
		}(), "owned by Pod p"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			members := testmembers.New([]string{"c1"})
			membersOwn(t, members, tt.member)
			fed := configMapObj(tt.member.GetName(), federationv1beta1.FinalizerDeleteFromUnderlyingClusters)
			fed.SetAnnotations(map[string]string{federationv1beta1.ConflictResolutionAnnotation: federationv1beta1.ConflictResolutionAdopt})
			tc := newTestController(t, federatedtypes.ByName(tt.typ), members, fed)
			err := tc.sync(t, "ns/"+tt.member.GetName())
			require.ErrorContains(t, err, "the federation never takes it over")
			require.ErrorContains(t, err, tt.why)
			assert.Equal(t, []string{"create", "get"}, members.Actions("c1"), "no write")
		})
	}
}

func TestAnHPAIsWrittenOnlyWhereItsTargetIsOurCopy(t *testing.T) {
	hpa := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "finalizers": []any{federationv1beta1.FinalizerDeleteFromUnderlyingClusters}},
		"spec": map[string]any{
			"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "theirs"},
			"minReplicas":    int64(1), "maxReplicas": int64(1),
		},
	}}
	members := testmembers.New([]string{"c1"})
	theirs := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}
	theirs.SetName("theirs")
	theirs.SetNamespace("ns")
	require.NoError(t, members.Clients["c1"].Tracker().Add(theirs))
	tc := newTestController(t, federatedtypes.ByName("horizontalpodautoscalers"), members, hpa)
	err := tc.sync(t, "ns/web")
	require.ErrorContains(t, err, "HorizontalPodAutoscaler ns/web names Deployment theirs (spec.scaleTargetRef), which in cluster c1 is not the federation's")
	assert.Empty(t, writesTo(members, "c1"))
	_, ok := members.Get("c1", membercluster.NamespacesResource, "", "ns")
	require.True(t, ok)
}

func TestACopyRunningAsAMembersOwnAccountIsNotWritten(t *testing.T) {
	deploy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "as-robot", "namespace": "ns"},
		"spec": map[string]any{"replicas": int64(1), "template": map[string]any{"spec": map[string]any{
			"serviceAccountName": "robot", "containers": []any{map[string]any{"name": "c", "image": "pause"}},
		}}},
	}}
	members := testmembers.New([]string{"c1"})
	robot := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount"}}
	robot.SetName("robot")
	robot.SetNamespace("ns")
	require.NoError(t, members.Clients["c1"].Tracker().Add(robot))
	tc := newTestController(t, federatedtypes.ByName("deployments"), members, deploy)
	err := tc.sync(t, "ns/as-robot")
	require.ErrorContains(t, err, "Deployment ns/as-robot names ServiceAccount robot (spec.template.spec.serviceAccountName), which in cluster c1 is not the federation's")
	assert.Empty(t, writesTo(members, "c1"))
}

func TestTheDefaultAccountOfANamespaceAdoptedFromTheMemberTakesTheAdoptionRight(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	memberNamespaceLabelled(t, members, "ns", map[string]string{memberrbac.AdoptedByLabel("fed"): "true"})
	theirs := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount"}}
	theirs.SetName("default")
	theirs.SetNamespace("ns")
	membersOwn(t, members, theirs)
	fed := theirs.DeepCopy()
	fed.SetUID("fed-sa")
	fed.Object["imagePullSecrets"] = []any{map[string]any{"name": "mine"}}
	tc := newTestController(t, federatedtypes.ByName("serviceaccounts"), members, fed)
	tc.addFederatedNamespace(t, nil)
	require.ErrorContains(t, tc.sync(t, "ns/default"), "was not created by this federation")
	assert.Equal(t, []string{"create"}, writesTo(members, "c1"), "the create that finds it there, and no apply: the member's pods run as it")
}

func TestWritesAMemberRefusesAreTriedAgainLessAndLessOften(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	members.Clients["c1"].PrependReactor("create", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "a", errors.New("the member's policy says no"))
	})
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters))
	var waits []time.Duration
	for range 3 {
		err := tc.w.WriteOnceForTesting(context.Background(), "c1", compareTask(t, tc, "ns/a", "c1"))
		var later queueworker.RetryAfter
		require.ErrorAs(t, err, &later)
		assert.True(t, apierrors.IsForbidden(err), "still the member's answer: %v", err)
		waits = append(waits, later.RetryAfter())
	}
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, waits)
}

func TestACopyWhoseAccountLeftIsRemoved(t *testing.T) {
	deploy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "uses-runner", "namespace": "ns", "finalizers": []any{federationv1beta1.FinalizerDeleteFromUnderlyingClusters}},
		"spec": map[string]any{"replicas": int64(1), "template": map[string]any{"spec": map[string]any{
			"serviceAccountName": "runner", "containers": []any{map[string]any{"name": "c", "image": "pause"}},
		}}},
	}}
	members := testmembers.New([]string{"c1"})
	runner := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount"}}
	runner.SetName("runner")
	runner.SetNamespace("ns")
	runner.SetLabels(map[string]string{federationv1beta1.FederationLabel: "fed", federationv1beta1.FederationUIDLabel: "fed-uid"})
	members.Put("c1", runner)
	tc := newTestController(t, federatedtypes.ByName("deployments"), members, deploy)
	require.NoError(t, tc.sync(t, "ns/uses-runner"))
	require.Equal(t, []string{"create"}, writesTo(members, "c1"), "written while the account is ours")
	tc.events()

	// In sync, and the account stays ours: nothing more.
	require.NoError(t, tc.sync(t, "ns/uses-runner"))
	require.Equal(t, []string{"create"}, writesTo(members, "c1"))

	// Our copy of the account goes while the federation has it (being
	// written again): the copy waits for it, and stays.
	members.Mu.Lock()
	delete(members.Cache["c1"], "ns/runner")
	members.Mu.Unlock()
	federated := runner.DeepCopy()
	federated.SetLabels(nil)
	require.NoError(t, tc.fedClient.Tracker().Add(federated))
	require.ErrorContains(t, tc.sync(t, "ns/uses-runner"), "Deployment ns/uses-runner waits for its ServiceAccount runner")
	require.Equal(t, []string{"create"}, writesTo(members, "c1"))

	// Deleted at the federation too: the copy that runs as it goes, for a
	// member's account of that name could come next.
	require.NoError(t, tc.fedClient.Tracker().Delete(federatedtypes.ByName("serviceaccounts").Resource, "ns", "runner"))
	// (Written as the member queue would try it again.)
	err := tc.w.WriteOnceForTesting(context.Background(), "c1", compareTask(t, tc, "ns/uses-runner", "c1"))
	require.ErrorContains(t, err, "Deployment ns/uses-runner names ServiceAccount runner (spec.template.spec.serviceAccountName), which neither the federation nor cluster c1 holds")
	assert.Equal(t, []string{"create", "delete"}, writesTo(members, "c1"))
	assert.Contains(t, strings.Join(tc.events(), "\n"), "Warning "+guard.ReasonReferenceNotOurs+" Deployment ns/uses-runner removed from cluster c1")
}

// An optional reference does not hold a copy back while absent; the
// member's own object of that name made afterwards, which no watch of ours
// sees, is found by checkUnheld's live reads and the copy goes.
func TestACopyNamingAMembersOptionalSecretIsRemoved(t *testing.T) {
	deploy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "finalizers": []any{federationv1beta1.FinalizerDeleteFromUnderlyingClusters}},
		"spec": map[string]any{"replicas": int64(1), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "c", "image": "pause", "envFrom": []any{
				map[string]any{"secretRef": map[string]any{"name": "extra", "optional": true}},
			}}},
		}}},
	}}
	members := testmembers.New([]string{"c1"})
	tc := newTestController(t, federatedtypes.ByName("deployments"), members, deploy)
	ctx := context.Background()
	require.NoError(t, tc.sync(t, "ns/web"))
	require.Equal(t, []string{"create"}, writesTo(members, "c1"), "an absent optional Secret holds nothing back")
	require.NoError(t, tc.sync(t, "ns/web"), "in sync")
	// Still absent: a round reads it, and nothing happens.
	tc.checkUnheld(ctx)
	require.Zero(t, tc.queue.Len())
	require.Equal(t, []string{"create"}, writesTo(members, "c1"))

	// The member's own Secret of the name: the copy goes.
	extra := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "extra", "namespace": "ns"}}}
	membersOwn(t, members, extra)
	tc.checkUnheld(ctx)
	require.Equal(t, 1, tc.queue.Len(), "the copy is looked at again")
	err := tc.sync(t, "ns/web")
	require.ErrorContains(t, err, "Deployment ns/web names Secret extra (spec.template.spec.containers[0].envFrom[0].secretRef.name), which in cluster c1 is not the federation's")
	assert.Equal(t, []string{"create", "delete"}, writesTo(members, "c1"))
	assert.Contains(t, strings.Join(tc.events(), "\n"), "Warning "+guard.ReasonReferenceNotOurs+" Deployment ns/web removed from cluster c1")
}

// A claim's data source is read as the member provisions the claim, and
// never again: the source going leaves the clone (deleting a claim may
// delete its volume).
func TestAClonedClaimStaysWhenItsSourceGoes(t *testing.T) {
	clone := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "PersistentVolumeClaim",
		"metadata": map[string]any{"name": "clone", "namespace": "ns", "finalizers": []any{federationv1beta1.FinalizerDeleteFromUnderlyingClusters}},
		"spec":     map[string]any{"accessModes": []any{"ReadWriteOnce"}, "dataSource": map[string]any{"kind": "PersistentVolumeClaim", "name": "golden"}},
	}}
	members := testmembers.New([]string{"c1"})
	golden := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim"}}
	golden.SetName("golden")
	golden.SetNamespace("ns")
	golden.SetLabels(map[string]string{federationv1beta1.FederationLabel: "fed", federationv1beta1.FederationUIDLabel: "fed-uid"})
	members.Put("c1", golden)
	tc := newTestController(t, federatedtypes.ByName("persistentvolumeclaims"), members, clone)
	require.NoError(t, tc.sync(t, "ns/clone"))
	require.Equal(t, []string{"create"}, writesTo(members, "c1"))

	members.Mu.Lock()
	delete(members.Cache["c1"], "ns/golden")
	members.Mu.Unlock()
	require.NoError(t, tc.sync(t, "ns/clone"))
	err := tc.w.WriteOnceForTesting(context.Background(), "c1", compareTask(t, tc, "ns/clone", "c1"))
	require.NoError(t, err)
	assert.Equal(t, []string{"create"}, writesTo(members, "c1"), "the clone stays")
}

// A copy naming what the federation never propagates (by an override,
// say) is not written, and tried again less and less often.
func TestACopyThatCannotNameIsSpacedOut(t *testing.T) {
	deploy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "gpu", "namespace": "ns", "finalizers": []any{federationv1beta1.FinalizerDeleteFromUnderlyingClusters}},
		"spec": map[string]any{"replicas": int64(1), "template": map[string]any{"spec": map[string]any{
			"containers":     []any{map[string]any{"name": "c", "image": "pause"}},
			"resourceClaims": []any{map[string]any{"name": "gpu", "resourceClaimName": "theirs"}},
		}}},
	}}
	members := testmembers.New([]string{"c1"})
	tc := newTestController(t, federatedtypes.ByName("deployments"), members, deploy)
	err := tc.sync(t, "ns/gpu")
	require.ErrorContains(t, err, `spec.template.spec.resourceClaims[0].resourceClaimName: resource.k8s.io/ResourceClaim "theirs" is not a kind the federation propagates`)
	var spaced queueworker.RetryAfter
	require.ErrorAs(t, err, &spaced)
	assert.Positive(t, spaced.RetryAfter())
	assert.Empty(t, writesTo(members, "c1"))
	assert.Contains(t, strings.Join(tc.events(), "\n"), "Warning "+guard.ReasonReferenceNotOurs+" Deployment ns/gpu not written in cluster c1")
}

// optionalSecrets is a Deployment whose pods read n optional Secrets,
// PREFIX-0 and on.
func optionalSecrets(name, prefix string, n int) *unstructured.Unstructured {
	var envFrom []any
	for i := range n {
		envFrom = append(envFrom, map[string]any{"secretRef": map[string]any{"name": fmt.Sprintf("%s-%d", prefix, i), "optional": true}})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": "ns", "finalizers": []any{federationv1beta1.FinalizerDeleteFromUnderlyingClusters}},
		"spec": map[string]any{"replicas": int64(0), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "c", "image": "pause", "envFrom": envFrom}},
		}}},
	}}
}

// However many optional names a tenant's copies give (here 3,000, beyond
// what one round could read one by one), one round finds the member's
// own object one of them names: one LIST per namespace and resource.
func TestManyOptionalNamesDoNotHideTheMembersObject(t *testing.T) {
	fed := []*unstructured.Unstructured{optionalSecrets("victim", "late", 1)}
	for i := range 30 {
		fed = append(fed, optionalSecrets(fmt.Sprintf("filler-%d", i), fmt.Sprintf("absent-%d", i), 100))
	}
	members := testmembers.New([]string{"c1"})
	tc := newTestController(t, federatedtypes.ByName("deployments"), members, fed...)
	for _, f := range fed {
		require.NoError(t, tc.sync(t, "ns/"+f.GetName()))
		require.NoError(t, tc.sync(t, "ns/"+f.GetName()), "in sync")
		tc.events() // (the fake recorder holds 100)
	}
	membersOwn(t, members, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "late-0", "namespace": "ns"}}})
	tc.checkUnheld(context.Background())
	require.Equal(t, 1, tc.queue.Len())
	k, _ := tc.queue.Get()
	tc.queue.Done(k)
	assert.Equal(t, "ns/victim", k)
}

// A StatefulSet's pods use the claims of their templates' names that the
// member holds; one the member makes after the copy was written (for the
// next ordinal) is found by a round, and the copy goes.
func TestAStatefulSetWhoseNextClaimIsAnothersGoes(t *testing.T) {
	sts := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "finalizers": []any{federationv1beta1.FinalizerDeleteFromUnderlyingClusters}},
		"spec": map[string]any{"replicas": int64(2), "serviceName": "web",
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "pause"}}}},
			"volumeClaimTemplates": []any{map[string]any{"metadata": map[string]any{"name": "data"}}}},
	}}
	members := testmembers.New([]string{"c1"})
	tc := newTestController(t, federatedtypes.ByName("statefulsets"), members, sts)
	require.NoError(t, tc.sync(t, "ns/web"))
	require.Equal(t, []string{"create"}, writesTo(members, "c1"))
	require.NoError(t, tc.sync(t, "ns/web"), "in sync")

	// Made from our template: ours.
	ours := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
		"metadata": map[string]any{"name": "data-web-0", "namespace": "ns", "labels": map[string]any{federatedtypes.ClaimLabel: "fed"}}}}
	membersOwn(t, members, ours)
	tc.checkUnheld(context.Background())
	require.Zero(t, tc.queue.Len())

	theirs := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
		"metadata": map[string]any{"name": "data-web-1", "namespace": "ns", "labels": map[string]any{"owner": "team-c"}}}}
	membersOwn(t, members, theirs)
	tc.checkUnheld(context.Background())
	require.Equal(t, 1, tc.queue.Len())
	err := tc.sync(t, "ns/web")
	require.ErrorContains(t, err, "StatefulSet ns/web would use PersistentVolumeClaim data-web-1 (spec.volumeClaimTemplates), which in cluster c1 was not made from the federation's template")
	assert.Equal(t, []string{"create", "delete"}, writesTo(members, "c1"))
}

// Another federation of our name sharing the member: its object carries
// our name label with its own UID. It is not ours, and a round finds it.
func TestAnObjectOfAnotherFederationOfOurNameIsFound(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	tc := newTestController(t, federatedtypes.ByName("deployments"), members, optionalSecrets("web", "theirs", 1))
	require.NoError(t, tc.sync(t, "ns/web"))
	require.NoError(t, tc.sync(t, "ns/web"), "in sync")
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "theirs-0", "namespace": "ns", "labels": map[string]any{
			federationv1beta1.FederationLabel: "fed", federationv1beta1.FederationUIDLabel: "another-uid"}}}}
	membersOwn(t, members, secret)
	tc.checkUnheld(context.Background())
	require.Equal(t, 1, tc.queue.Len())
}
