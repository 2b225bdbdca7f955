package propagation

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
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

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer/guard"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/queueworker"
)

// gizmos is a custom resource type with a status subresource, as package
// customresources makes it.
func gizmos() *federatedtypes.Type {
	return &federatedtypes.Type{
		Name:           "gizmos.other.example.com",
		Resource:       schema.GroupVersionResource{Group: "other.example.com", Version: "v1", Resource: "gizmos"},
		Kind:           "Gizmo",
		Namespaced:     true,
		Fields:         []string{"spec"},
		DropsFinalizer: true,
		Conditions:     true,
		Status: func([]federatedtypes.Member) (map[string]any, map[string]string) {
			return map[string]any{}, nil
		},
	}
}

// member403 makes a member refuse the federation's verbs on gizmos while
// how says so: "rbac" as its authorizer does for a group the cluster was
// not joined for, "policy" as its admission policy does.
func member403(members *testmembers.Members, cluster string, how *atomic.Value, verbs ...string) {
	gr := schema.GroupResource{Group: "other.example.com", Resource: "gizmos"}
	for _, verb := range verbs {
		members.Clients[cluster].PrependReactor(verb, "gizmos", func(clienttesting.Action) (bool, runtime.Object, error) {
			switch how.Load() {
			case "rbac":
				return true, nil, apierrors.NewForbidden(gr, "g", errors.New(`User "system:serviceaccount:federation-system:federation-fed" cannot `+verb+
					` resource "gizmos" in API group "other.example.com" in the namespace "e2e"`))
			case "policy":
				return true, nil, apierrors.NewForbidden(gr, "g", errors.New(`ValidatingAdmissionPolicy 'federation-fed' with binding 'federation-fed' denied request: no`))
			}
			return false, nil, nil
		})
	}
}

func gizmo() *unstructured.Unstructured {
	g := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "other.example.com/v1", "kind": "Gizmo", "spec": map[string]any{"size": int64(1)}}}
	g.SetNamespace("e2e")
	g.SetName("g")
	g.SetUID("uid-g")
	return g
}

// A member not joined for a custom resource's group refuses its copy at
// every write: told once per cluster, with the fix, in an event and the
// Propagated condition; the retries back off and say nothing more.
func TestACustomResourceGroupNotGrantedIsToldOncePerCluster(t *testing.T) {
	members := testmembers.New([]string{"c1", "c2", "c3"})
	// c1's cache of the type synced (the create is refused), c2's did not
	// (its read is refused); c3 was joined for the group.
	members.Unsynced = []string{"c2"}
	var how atomic.Value
	how.Store("rbac")
	member403(members, "c1", &how, "create", "patch")
	member403(members, "c2", &how, "get", "create", "patch")
	tc := newTestController(t, gizmos(), members, gizmo())

	err := tc.sync(t, "e2e/g")
	require.Error(t, err)
	var notGranted *guard.ErrGroupNotGranted
	require.ErrorAs(t, err, &notGranted)
	assert.True(t, apierrors.IsForbidden(err), "still the member's answer: %v", err)
	events := tc.events()
	require.Len(t, events, 3, "%q", events)
	assert.Equal(t, "Normal CreateInCluster Created Gizmo e2e/g in cluster c3", events[0])
	for i, c := range []string{"c1", "c2"} {
		assert.Equal(t, "Warning GroupNotGrantedInCluster Gizmo e2e/g is not propagated to cluster "+c+
			": the cluster was not joined for API group other.example.com, so the federation may not write it there; "+
			"its admin grants it with `kubefed join "+c+" --refresh --add-custom-resource-groups=other.example.com`", events[i+1])
	}

	// The Propagated condition says the same, not the member's answer.
	got, err := tc.fedClient.Resource(tc.typ.Resource).Namespace("e2e").Get(context.Background(), "g", metav1.GetOptions{})
	require.NoError(t, err)
	conditions, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	require.Len(t, conditions, 1)
	c := conditions[0].(map[string]any)
	assert.Equal(t, PropagatedCondition, c["type"])
	assert.Equal(t, "False", c["status"])
	msg := c["message"].(string)
	for _, want := range []string{"cluster c1", "cluster c2", "API group other.example.com", "kubefed join c1 --refresh --add-custom-resource-groups=other.example.com",
		"kubefed join c2 --refresh --add-custom-resource-groups=other.example.com"} {
		assert.Contains(t, msg, want)
	}
	assert.NotContains(t, msg, "cannot create", "not the member's raw answer")
	assert.NotContains(t, msg, "c3")

	// Retries wait longer and longer, and tell nothing more.
	var waits []time.Duration
	for range 3 {
		err := tc.w.WriteOnceForTesting(context.Background(), "c1", compareTask(t, tc, "e2e/g", "c1"))
		var later queueworker.RetryAfter
		require.ErrorAs(t, err, &later)
		require.ErrorAs(t, err, &notGranted)
		waits = append(waits, later.RetryAfter())
	}
	assert.Equal(t, []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second}, waits, "after the first refusal's second")
	assert.Empty(t, tc.events(), "told once")

	// Another refusal (the member's policy) is told as before, and the
	// group's refusal again when it comes back.
	how.Store("policy")
	err = tc.w.WriteOnceForTesting(context.Background(), "c1", compareTask(t, tc, "e2e/g", "c1"))
	require.Error(t, err)
	assert.NotErrorAs(t, err, &notGranted)
	events = tc.events()
	require.Len(t, events, 1)
	assert.True(t, strings.HasPrefix(events[0], "Warning CreateInClusterFailed Creating Gizmo e2e/g in cluster c1 failed"), events[0])
	how.Store("rbac")
	require.Error(t, tc.w.WriteOnceForTesting(context.Background(), "c1", compareTask(t, tc, "e2e/g", "c1")))
	events = tc.events()
	require.Len(t, events, 1)
	assert.True(t, strings.HasPrefix(events[0], "Warning GroupNotGrantedInCluster Gizmo e2e/g is not propagated to cluster c1"), events[0])

	// Granted (kubefed join --refresh): written, and a later refusal is
	// told again.
	how.Store("")
	require.NoError(t, tc.w.WriteOnceForTesting(context.Background(), "c1", compareTask(t, tc, "e2e/g", "c1")))
	_, held := members.Get("c1", tc.typ.Resource, "e2e", "g")
	assert.True(t, held, "c1 holds the copy")
	members.Mu.Lock()
	delete(members.Cache["c1"], "e2e/g")
	members.Mu.Unlock()
	how.Store("rbac")
	task := compareTask(t, tc, "e2e/g", "c1")
	task.InSync = false // deleted there: the cache cannot tell, the write reads it
	require.Error(t, tc.w.WriteOnceForTesting(context.Background(), "c1", task))
	events = tc.events()
	require.Len(t, events, 1, "told again after a write went through")
	assert.True(t, strings.HasPrefix(events[0], "Warning GroupNotGrantedInCluster Gizmo e2e/g is not propagated to cluster c1"), events[0])
}

// Only the type's own custom resource group is such a refusal: the
// authorizer refusing another type's, or a group of Kubernetes itself
// (whose rights join gives or never does), is the member's answer.
func TestNotGrantedGroupIsTheTypesCustomGroup(t *testing.T) {
	forbidden := func(resource, group string) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: group, Resource: resource}, "x", errors.New(
			`User "u" cannot create resource "`+resource+`" in API group "`+group+`" in the namespace "ns"`))
	}
	group, ok := guard.NotGrantedGroup(gizmos(), forbidden("gizmos", "other.example.com"))
	assert.True(t, ok)
	assert.Equal(t, "other.example.com", group)
	_, ok = guard.NotGrantedGroup(gizmos(), forbidden("widgets", "other.example.com"))
	assert.False(t, ok, "another type's")
	_, ok = guard.NotGrantedGroup(federatedtypes.ByName("deployments"), forbidden("deployments", "apps"))
	assert.False(t, ok, "a built-in group")
	gateways := &federatedtypes.Type{Resource: schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}}
	_, ok = guard.NotGrantedGroup(gateways, forbidden("gateways", "gateway.networking.k8s.io"))
	assert.False(t, ok, "a group of Kubernetes itself, which join never grants")
}
