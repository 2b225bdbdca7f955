package propagation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/memberrbac"
)

var roleBindings = rbacv1.SchemeGroupVersion.WithResource("rolebindings")

func TestNamespaceCopiesAreMarkedCreatedOnlyWhenTheFederationCreatesThem(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	tc := newTestController(t, federatedtypes.Namespaces, members, namespaceObj("team"))
	tc.Controller.members = cachedNamespaces{members}
	tc.w = tc.newWriter()
	tc.r = tc.newReleaser()
	fed := namespaceObj("team")
	desired, hash, err := plan.Desired(federatedtypes.Namespaces, fed, "fed", "fed-uid")
	require.NoError(t, err)

	marked, markedHash, err := tc.w.ForCopy("c1", fed, desired, hash)
	require.NoError(t, err)
	assert.Equal(t, "fed", marked.GetLabels()[memberrbac.CreatedByLabel], "a copy not there yet is created marked")
	assert.NotEqual(t, hash, markedHash, "the mark is part of the hash")
	assert.NotContains(t, desired.GetLabels(), memberrbac.CreatedByLabel, "the common desired object is left as it is")

	require.NoError(t, tc.sync(t, "team"))
	created := members.Cache["c1"]["team"]
	require.NotNil(t, created)
	assert.Equal(t, "fed", created.GetLabels()[memberrbac.CreatedByLabel])
	_, again, err := tc.w.ForCopy("c1", fed, desired, hash)
	require.NoError(t, err)
	assert.Equal(t, markedHash, again, "a copy holding the mark keeps it")

	unmarked := created.DeepCopy()
	labels := unmarked.GetLabels()
	delete(labels, memberrbac.CreatedByLabel)
	unmarked.SetLabels(labels)
	members.Put("c1", unmarked)
	kept, keptHash, err := tc.w.ForCopy("c1", fed, desired, hash)
	require.NoError(t, err)
	assert.NotContains(t, kept.GetLabels(), memberrbac.CreatedByLabel, "a copy there without the mark (older, or taken off) is never marked later")
	assert.Equal(t, hash, keptHash)

	members.Cache["c1"] = map[string]*unstructured.Unstructured{}
	adopted, _, err := plan.WithAdopted(federatedtypes.ByName("namespaces"), marked)
	require.NoError(t, err)
	assert.NotContains(t, adopted.GetLabels(), memberrbac.CreatedByLabel, "an adopted namespace is the member's: never marked")
	stillAdopted, _, err := tc.w.ForCopy("c1", fed, adopted, "h")
	require.NoError(t, err)
	assert.NotContains(t, stillAdopted.GetLabels(), memberrbac.CreatedByLabel)
}

// cachedNamespaces are fakeMembers whose namespaces cache holds what is
// put there, as the real one holds the namespaces labelled ours.
type cachedNamespaces struct{ *testmembers.Members }

func (m cachedNamespaces) Get(cluster string, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, bool) {
	m.Mu.Lock()
	defer m.Mu.Unlock()
	o, ok := m.Cache[cluster][fedobject.Key(ns, name)]
	return o, ok
}

func roleObj(ns, name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
		"rules": []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get"}}}}}
	o.SetNamespace(ns)
	o.SetName(name)
	return o
}

// memberNamespace puts a member namespace in the cache, marked as created
// by federation by (unmarked when "").
func memberNamespace(members *testmembers.Members, cluster, name, by string) {
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
	ns.SetName(name)
	labels := map[string]string{federationv1beta1.FederationLabel: "fed"}
	if by != "" {
		labels[memberrbac.CreatedByLabel] = by
	}
	ns.SetLabels(labels)
	members.Put(cluster, ns)
}

func accessBinding(t *testing.T, members *testmembers.Members, cluster, ns string) *rbacv1.RoleBinding {
	t.Helper()
	obj, err := members.Clients[cluster].Tracker().Get(roleBindings, ns, memberrbac.AccessName("fed"))
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(t, err)
	var rb rbacv1.RoleBinding
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.(*unstructured.Unstructured).Object, &rb))
	return &rb
}

func TestARoleBindsTheFederationInANamespaceItCreated(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	memberNamespace(members, "c1", "ns", "fed")
	// The fake's create reactor answers without storing: store too, so
	// that the binding is found again.
	members.Clients["c1"].PrependReactor("create", "rolebindings", func(a clienttesting.Action) (bool, runtime.Object, error) {
		obj := a.(clienttesting.CreateAction).GetObject().(*unstructured.Unstructured)
		return true, obj, members.Clients["c1"].Tracker().Create(roleBindings, obj, obj.GetNamespace())
	})
	tc := newTestController(t, federatedtypes.ByName("roles"), members, roleObj("ns", "r"), roleObj("ns", "s"))
	require.NoError(t, tc.sync(t, "ns/r"))
	rb := accessBinding(t, members, "c1", "ns")
	require.NotNil(t, rb, "the federation's binding is made before its first Role there")
	want := memberrbac.AccessRoleBinding("fed", "ns")
	assert.Equal(t, want.RoleRef, rb.RoleRef)
	assert.Equal(t, want.Subjects, rb.Subjects)
	assert.Equal(t, "fed", rb.Labels[memberrbac.AccessLabel])
	assert.Equal(t, []string{"get", "create", "create"}, members.Actions("c1"), "read the binding, make it, make the Role")

	members.Clients["c1"].ClearActions()
	require.NoError(t, tc.sync(t, "ns/s"))
	assert.Equal(t, []string{"create"}, members.Actions("c1"), "a binding found is not read again for the next Role")

	// Deleted in the member: the next write refused for it puts it back.
	require.NoError(t, members.Clients["c1"].Tracker().Delete(roleBindings, "ns", want.Name))
	refusedOnce := false
	members.Clients["c1"].PrependReactor("patch", "roles", func(clienttesting.Action) (bool, runtime.Object, error) {
		if refusedOnce {
			return false, nil, nil
		}
		refusedOnce = true
		return true, nil, apierrors.NewForbidden(rbacv1.Resource("roles"), "r", nil)
	})
	changed := roleObj("ns", "r")
	changed.Object["rules"] = []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": []any{"get"}}}
	require.NoError(t, tc.indexer.Update(changed))
	require.NoError(t, tc.sync(t, "ns/r"))
	assert.True(t, refusedOnce)
	assert.NotNil(t, accessBinding(t, members, "c1", "ns"), "put back")
	rules, _, _ := unstructured.NestedSlice(members.Cache["c1"]["ns/r"].Object, "rules")
	assert.Equal(t, []any{"secrets"}, rules[0].(map[string]any)["resources"], "and the Role written")
}
