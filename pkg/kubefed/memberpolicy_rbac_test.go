package kubefed

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/federation-v1/federation/pkg/memberrbac"
)

// Join's ClusterRole gives the federation, on RBAC, only reading Roles and
// RoleBindings, creating RoleBindings and binding its own namespace role;
// the namespace role, escalate and bind on Roles and binding the bindable
// ClusterRoles, nothing cluster-wide.
func TestJoinRBACRules(t *testing.T) {
	a := newMemberAccess("fed")
	var onRBAC []rbacv1.PolicyRule
	for _, r := range a.Role.Rules {
		if slices.Contains(r.APIGroups, rbacv1.GroupName) {
			onRBAC = append(onRBAC, r)
		}
	}
	assert.Equal(t, []rbacv1.PolicyRule{
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles", "rolebindings"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"rolebindings"}, Verbs: []string{"create"}},
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}, ResourceNames: []string{"federation-fed-namespace-rbac"}},
	}, onRBAC)

	ns := a.NamespaceRBAC
	assert.Equal(t, "federation-fed-namespace-rbac", ns.Name)
	for _, r := range ns.Rules {
		assert.Equal(t, []string{rbacv1.GroupName}, r.APIGroups)
		assert.NotContains(t, r.Resources, "clusterrolebindings")
		assert.NotContains(t, r.Verbs, "*")
		assert.NotContains(t, r.Verbs, "impersonate")
		if slices.Contains(r.Resources, "clusterroles") {
			assert.Equal(t, []string{"bind"}, r.Verbs)
			assert.Equal(t, []string{"admin", "edit", "view"}, r.ResourceNames, "only the bindable ClusterRoles")
		}
	}
}

func TestUnjoinRemovesTheNamespaceRBAC(t *testing.T) {
	ctx := context.Background()
	mine := memberrbac.AccessRoleBinding("fed", "team-a")
	other := memberrbac.AccessRoleBinding("other", "team-a")
	member := fake.NewClientset(newMemberAccess("fed").NamespaceRBAC, mine, other)
	require.NoError(t, removeNamespaceRBAC(ctx, member, "fed"))
	left, err := member.RbacV1().RoleBindings("").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, left.Items, 1)
	assert.Equal(t, other.Name, left.Items[0].Name, "another federation's stays")
	roles, err := member.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, roles.Items)
	require.NoError(t, removeNamespaceRBAC(ctx, member, "fed"), "removing what is gone is fine")
}

func TestMemberPolicyRBACDecisions(t *testing.T) {
	a := newMemberAccess("fed")
	fedUser := accountUsername(a.Account.Namespace, a.Account.Name)
	v := compile(t, a.Policy)
	namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	roles := rbacv1.SchemeGroupVersion.WithResource("roles")
	bindings := rbacv1.SchemeGroupVersion.WithResource("rolebindings")
	clusterRoles := rbacv1.SchemeGroupVersion.WithResource("clusterroles")
	clusterBindings := rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings")

	nsLabelled := func(labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: labels}}
	}
	created := nsLabelled(map[string]string{memberrbac.CreatedByLabel: "fed"})
	others := nsLabelled(map[string]string{memberrbac.CreatedByLabel: "other"})
	own := nsLabelled(nil)
	role := func(verbs ...string) *rbacv1.Role {
		return &rbacv1.Role{Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: verbs}}}
	}
	binding := func(kind, name string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "app", Namespace: "team-a"}}}
	}
	adoptedBy := func(names ...string) *corev1.Namespace {
		labels := map[string]string{}
		for _, name := range names {
			labels[memberrbac.AdoptedByLabel(name)] = memberrbac.Adopted
		}
		return nsLabelled(labels)
	}
	subjects := func(s ...rbacv1.Subject) *rbacv1.RoleBinding {
		b := binding("ClusterRole", "edit")
		b.Subjects = s
		return b
	}
	access := memberrbac.AccessRoleBinding("fed", "team-a")
	stolen := access.DeepCopy()
	stolen.Subjects = []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "mallory"}}

	type step struct {
		request
		in *corev1.Namespace
	}
	create := func(name string, gvr schema.GroupVersionResource, kind string, in *corev1.Namespace, obj runtime.Object, refused string) step {
		ns := ""
		if in != nil {
			ns = in.Name
		}
		objName := "x"
		if rb, ok := obj.(*rbacv1.RoleBinding); ok && rb.Name != "" {
			objName = rb.Name
		}
		return step{request{name: name, user: fedUser, op: admission.Create, resource: gvr, kind: kind, namespace: ns, objName: objName, obj: obj, refused: refused}, in}
	}
	for _, s := range []step{
		create("a Role in a namespace it created", roles, "Role", created, role("get", "list"), ""),
		create("a Role in a member's own namespace", roles, "Role", own, role("get"), "in a namespace it did not create"),
		create("a Role in another federation's namespace", roles, "Role", others, role("get"), "in a namespace it did not create"),
		create("a Role granting escalate", roles, "Role", created, role("escalate"), "write a Role granting"),
		create("a Role granting bind", roles, "Role", created, role("get", "bind"), "write a Role granting"),
		create("a Role granting impersonate", roles, "Role", created, role("impersonate"), "write a Role granting"),
		create("a Role granting *", roles, "Role", created, role("*"), "write a Role granting"),
		create("a binding to a Role", bindings, "RoleBinding", created, binding("Role", "app"), ""),
		create("a binding to edit", bindings, "RoleBinding", created, binding("ClusterRole", "edit"), ""),
		create("a binding to cluster-admin", bindings, "RoleBinding", created, binding("ClusterRole", "cluster-admin"), "bind a ClusterRole other than"),
		create("a binding to edit in a member's namespace", bindings, "RoleBinding", own, binding("ClusterRole", "edit"), "in a namespace it did not create"),
		create("its own binding where it created the namespace", bindings, "RoleBinding", created, access, ""),
		create("its own binding in a member's namespace", bindings, "RoleBinding", own, access, "in a namespace it did not create"),
		create("its namespace role bound to someone else", bindings, "RoleBinding", created, stolen, "bind a ClusterRole other than"),
		create("a ClusterRole", clusterRoles, "ClusterRole", nil, &rbacv1.ClusterRole{}, "write ClusterRoles or ClusterRoleBindings"),
		create("a ClusterRoleBinding", clusterBindings, "ClusterRoleBinding", nil, &rbacv1.ClusterRoleBinding{}, "write ClusterRoles or ClusterRoleBindings"),
		{request{name: "deleting a Role where it created the namespace", user: fedUser, op: admission.Delete, resource: roles, kind: "Role",
			namespace: "team-a", objName: "x", old: role("get")}, created},
		{request{name: "creating a Namespace marked its", user: fedUser, op: admission.Create, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: created}, nil},
		{request{name: "creating a Namespace marked another federation's", user: fedUser, op: admission.Create, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: others, refused: "mark a namespace"}, nil},
		{request{name: "marking a member's Namespace", user: fedUser, op: admission.Update, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: created, old: own, refused: "mark a namespace"}, nil},
		{request{name: "keeping the mark", user: fedUser, op: admission.Update, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: created, old: created}, nil},
		{request{name: "taking the mark off", user: fedUser, op: admission.Update, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: own, old: created}, nil},
		{request{name: "a member admin marks a Namespace", user: "admin", op: admission.Update, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: created, old: own}, nil},

		{request{name: "adopting a Namespace for itself", user: fedUser, op: admission.Update, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: adoptedBy("fed"), old: own}, nil},
		{request{name: "keeping its adopted mark", user: fedUser, op: admission.Update, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: adoptedBy("fed"), old: adoptedBy("fed")}, nil},
		{request{name: "taking its adopted mark off", user: fedUser, op: admission.Update, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: own, old: adoptedBy("fed")}, nil},
		{request{name: "keeping another federation's adopted mark", user: fedUser, op: admission.Update, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: adoptedBy("other"), old: adoptedBy("other")}, nil},
		{request{name: "adopting a Namespace for another federation", user: fedUser, op: admission.Update, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: adoptedBy("other"), old: own, refused: "may not mark a namespace federation.kubernetes.io/adopted-by.NAME other than its own (federation.kubernetes.io/adopted-by.fed=true)"}, nil},
		{request{name: "adopting a Namespace another federation adopted too", user: fedUser, op: admission.Update, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: adoptedBy("other", "fed"), old: adoptedBy("other")}, nil},
		{request{name: "marking its own adoption other than true", user: fedUser, op: admission.Update, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: nsLabelled(map[string]string{memberrbac.AdoptedByLabel("fed"): "yes"}), old: own, refused: "adopted-by"}, nil},
		{request{name: "creating a Namespace adopted by another federation", user: fedUser, op: admission.Create, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: adoptedBy("other"), refused: "adopted-by"}, nil},
		{request{name: "taking over another federation's adopted Namespace", user: fedUser, op: admission.Update, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: adoptedBy("fed"), old: adoptedBy("other"), refused: "nor change or remove another federation's mark"}, nil},
		{request{name: "handing its adopted Namespace to another federation", user: fedUser, op: admission.Update, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: adoptedBy("other"), old: adoptedBy("fed"), refused: "adopted-by"}, nil},
		{request{name: "taking another federation's adopted mark off", user: fedUser, op: admission.Update, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: own, old: adoptedBy("other"), refused: "adopted-by"}, nil},
		{request{name: "deleting a Namespace another federation adopted", user: fedUser, op: admission.Delete, resource: namespaces, kind: "Namespace",
			objName: "team-a", old: adoptedBy("other")}, nil},
		{request{name: "a member admin adopts a Namespace for another federation", user: "admin", op: admission.Update, resource: namespaces, kind: "Namespace",
			objName: "team-a", obj: adoptedBy("other"), old: adoptedBy("fed")}, nil},

		create("a binding to system:unauthenticated", bindings, "RoleBinding", created,
			subjects(rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:unauthenticated"}), "write a RoleBinding naming a system: user or group"),
		create("a binding to system:serviceaccounts", bindings, "RoleBinding", created,
			subjects(rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "app", Namespace: "team-a"},
				rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccounts"}), "naming a system: user or group"),
		create("a binding to system:anonymous", bindings, "RoleBinding", created,
			subjects(rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "system:anonymous"}), "naming a system: user or group"),
		create("a binding to a service account as a user", bindings, "RoleBinding", created,
			subjects(rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccount:kube-system:default"}), "naming a system: user or group"),
		create("a binding to kube-system's service account", bindings, "RoleBinding", created,
			subjects(rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: "kube-system"}),
			"write a RoleBinding naming a service account of kube-system, kube-public, kube-node-lease, federation-system"),
		create("a binding to the federation's account", bindings, "RoleBinding", created,
			subjects(memberrbac.Account("fed")), "naming a service account of"),
		create("a binding to users, groups and accounts of tenants", bindings, "RoleBinding", created, subjects(
			rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"},
			rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "team-a-devs"},
			rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "ci", Namespace: "team-b"}), ""),
	} {
		t.Run(s.name, func(t *testing.T) {
			refusals := decideIn(t, v, s.request, s.in)
			if s.refused == "" {
				assert.Empty(t, refusals)
				return
			}
			require.Len(t, refusals, 1, "one rule refuses")
			assert.Contains(t, refusals[0], s.refused)
			assert.Contains(t, refusals[0], "(policy federation-fed)")
		})
	}
}
