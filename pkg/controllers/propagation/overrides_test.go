package propagation

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// overridden is a ConfigMap with overrides, and three members: c1 and c2
// in eu, c3 in us.
func overriddenSetup(t *testing.T, rules string) (*testController, *testmembers.Members) {
	t.Helper()
	fed := configMapObj("a")
	fed.SetAnnotations(map[string]string{federationv1beta1.OverridesAnnotation: rules})
	members := testmembers.New([]string{"c1", "c2", "c3"})
	for i, region := range []string{"eu", "eu", "us"} {
		members.Ready[i].Labels = map[string]string{"region": region}
	}
	return newTestController(t, federatedtypes.ByName("configmaps"), members, fed), members
}

func dataIn(t *testing.T, m *testmembers.Members, cluster string) map[string]any {
	t.Helper()
	cp, ok := m.Get(cluster, federatedtypes.ByName("configmaps").Resource, "ns", "a")
	require.True(t, ok, "a copy in %s", cluster)
	data, _, _ := unstructured.NestedMap(cp.Object, "data")
	return data
}

func clearActions(m *testmembers.Members) {
	for _, c := range m.Clients {
		c.ClearActions()
	}
}

const twoRules = `[
	{"clusterSelector":[{"key":"region","operator":"in","values":["eu"]}],"patches":[{"op":"replace","path":"/data/k","value":"eu"}]},
	{"clusters":["c2"],"patches":[{"op":"replace","path":"/data/k","value":"c2"}]}]`

func TestOverridesPerCluster(t *testing.T) {
	tc, members := overriddenSetup(t, twoRules)
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, map[string]any{"k": "eu"}, dataIn(t, members, "c1"), "by selector")
	assert.Equal(t, map[string]any{"k": "c2"}, dataIn(t, members, "c2"), "the later rule wins")
	assert.Equal(t, map[string]any{"k": "v"}, dataIn(t, members, "c3"), "no rule: the base")
	cp, _ := members.Get("c1", federatedtypes.ByName("configmaps").Resource, "ns", "a")
	assert.NotContains(t, cp.GetAnnotations(), federationv1beta1.OverridesAnnotation, "the rules stay at the federation")
	assert.Equal(t, []string{
		"Normal CreateInCluster Created ConfigMap ns/a in clusters c1, c2, c3",
		"Normal OverridesApplied Overrides applied to ConfigMap ns/a: rule 0 in clusters c1, c2; rule 1 in cluster c2",
	}, tc.events())

	// At rest: no member write, no event.
	clearActions(members)
	require.NoError(t, tc.sync(t, "ns/a"))
	for _, c := range []string{"c1", "c2", "c3"} {
		assert.Empty(t, members.Actions(c), c)
	}
	assert.Empty(t, tc.events())

	// Drift in c2 is repaired to c2's own version.
	edited := dataCopy(t, members, "c2")
	edited.SetResourceVersion("2")
	edited.SetGeneration(2)
	edited.Object["data"] = map[string]any{"k": "hand"}
	members.Put("c2", edited)
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, map[string]any{"k": "c2"}, dataIn(t, members, "c2"))
	assert.Equal(t, []string{"Normal UpdateInCluster Restored ConfigMap ns/a in cluster c2: it was changed there"}, tc.events())

	// Changing the rule of c2 only rewrites c2.
	clearActions(members)
	fed := configMapObj("a")
	fed.SetAnnotations(map[string]string{federationv1beta1.OverridesAnnotation: `[
		{"clusterSelector":[{"key":"region","operator":"in","values":["eu"]}],"patches":[{"op":"replace","path":"/data/k","value":"eu"}]},
		{"clusters":["c2"],"patches":[{"op":"replace","path":"/data/k","value":"c2-new"}]}]`})
	require.NoError(t, tc.indexer.Update(fed))
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, map[string]any{"k": "c2-new"}, dataIn(t, members, "c2"))
	assert.Empty(t, members.Actions("c1"))
	assert.Empty(t, members.Actions("c3"))
	assert.Equal(t, []string{"Normal UpdateInCluster Updated ConfigMap ns/a in cluster c2"}, tc.events(), "the same rules apply where they did")

	// Without the annotation every copy returns to the base.
	require.NoError(t, tc.indexer.Update(configMapObj("a")))
	require.NoError(t, tc.sync(t, "ns/a"))
	for _, c := range []string{"c1", "c2", "c3"} {
		assert.Equal(t, map[string]any{"k": "v"}, dataIn(t, members, c), c)
	}
	assert.Equal(t, []string{
		"Normal OverridesApplied No overrides apply to ConfigMap ns/a any more",
		"Normal UpdateInCluster Updated ConfigMap ns/a in clusters c1, c2",
	}, tc.events())
}

func dataCopy(t *testing.T, m *testmembers.Members, cluster string) *unstructured.Unstructured {
	cp, ok := m.Get(cluster, federatedtypes.ByName("configmaps").Resource, "ns", "a")
	require.True(t, ok)
	return cp.DeepCopy()
}

func TestOverrideFailingInOneCluster(t *testing.T) {
	tc, members := overriddenSetup(t, `[
		{"patches":[{"op":"replace","path":"/data/k","value":"all"}]},
		{"clusters":["c2"],"patches":[{"op":"test","path":"/data/k","value":"v"}]}]`)
	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Equal(t, map[string]any{"k": "all"}, dataIn(t, members, "c1"))
	assert.Equal(t, map[string]any{"k": "all"}, dataIn(t, members, "c3"))
	_, ok := members.Get("c2", federatedtypes.ByName("configmaps").Resource, "ns", "a")
	assert.False(t, ok, "c2 is left alone")
	assert.Equal(t, []string{"create"}, members.Actions("c1"))
	assert.Empty(t, members.Actions("c2"))
	events := tc.events()
	require.Len(t, events, 3)
	assert.Equal(t, "Normal OverridesApplied Overrides applied to ConfigMap ns/a: rule 0 in clusters c1, c3", events[1])
	assert.Contains(t, events[2], "Warning OverrideFailed Overrides of ConfigMap ns/a failed in cluster c2, whose copy is left as it was: overrides[1].patches[0].path")

	require.NoError(t, tc.sync(t, "ns/a"))
	assert.Empty(t, tc.events(), "told once")
	assert.Empty(t, members.Actions("c2"))
}

func TestInvalidOverridesWriteNothing(t *testing.T) {
	tc, members := overriddenSetup(t, `[{"patches":[{"op":"replace","path":"/metadata/name","value":"b"}]}]`)
	require.NoError(t, tc.sync(t, "ns/a"))
	for _, c := range []string{"c1", "c2", "c3"} {
		assert.Empty(t, members.Actions(c), c)
	}
	events := tc.events()
	require.Len(t, events, 1)
	assert.Contains(t, events[0], "Warning InvalidOverrides ConfigMap ns/a: metadata.annotations[federation.kubernetes.io/overrides][0].patches[0].path: Forbidden")
}

func TestOverridesOfADividedDeployment(t *testing.T) {
	members := testmembers.New([]string{"c1", "c2"})
	fed := deploymentObj()
	require.NoError(t, unstructured.SetNestedField(fed.Object, int64(4), "spec", "replicas"))
	require.NoError(t, unstructured.SetNestedField(fed.Object, []any{map[string]any{"name": "app", "image": "nginx:1.27"}},
		"spec", "template", "spec", "containers"))
	fed.SetAnnotations(map[string]string{federationv1beta1.OverridesAnnotation: `[{"clusters":["c1"],"image":{"tag":"1.28"}},
		{"clusters":["c2"],"patches":[{"op":"test","path":"/spec/paused","value":true}]}]`})
	tc := newTestController(t, federatedtypes.ByName("deployments"), members, fed)
	require.NoError(t, tc.sync(t, "ns/d"))

	n, _ := appliedReplicas(t, members, "c1")
	assert.Equal(t, int64(2), n, "c1 runs its planned share")
	cp, ok := members.Get("c1", federatedtypes.ByName("deployments").Resource, "ns", "d")
	require.True(t, ok)
	containers, _, _ := unstructured.NestedSlice(cp.Object, "spec", "template", "spec", "containers")
	assert.Equal(t, "nginx:1.28", containers[0].(map[string]any)["image"])
	assert.Empty(t, members.Actions("c2"), "c2's rule failed: its copy is left alone")

	got, err := tc.fedClient.Resource(federatedtypes.ByName("deployments").Resource).Namespace("ns").Get(context.Background(), "d", metav1.GetOptions{})
	require.NoError(t, err)
	conditions, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	var propagated map[string]any
	for _, c := range conditions {
		if m := c.(map[string]any); m["type"] == PropagatedCondition {
			propagated = m
		}
	}
	require.NotNil(t, propagated)
	assert.Equal(t, "False", propagated["status"])
	assert.Contains(t, propagated["message"], "cluster c2: overrides[1].patches[0].path")
}

// A rule may not take the federation's mark off what a copy selects: the
// member's own pods would be selected (exposed, adopted).
func TestOverridesCannotUnmarkSelectors(t *testing.T) {
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "finalizers": []any{federationv1beta1.FinalizerDeleteFromUnderlyingClusters},
			"annotations": map[string]any{federationv1beta1.OverridesAnnotation: `[{"clusters":["c1"],"patches":[{"op":"replace","path":"/spec/selector","value":{"app":"theirs"}}]}]`}},
		"spec": map[string]any{"selector": map[string]any{"app": "web"}, "ports": []any{map[string]any{"port": int64(80)}}},
	}}
	members := testmembers.New([]string{"c1"})
	tc := newTestController(t, federatedtypes.ByName("services"), members, svc)
	require.NoError(t, tc.sync(t, "ns/web"))
	cp, ok := members.Get("c1", federatedtypes.ByName("services").Resource, "ns", "web")
	require.True(t, ok)
	selector, _, _ := unstructured.NestedStringMap(cp.Object, "spec", "selector")
	assert.Equal(t, map[string]string{"app": "theirs", federationv1beta1.FederationLabel: "fed"}, selector)
}
