package rbac_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/federation-v1/federation/pkg/memberrbac"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// access is the RoleBinding of the federation's RBAC rights in a namespace
// it created, and the ClusterRole it binds.
var access = memberrbac.AccessName("fed")

func TestRBAC(t *testing.T) {
	if testing.Short() {
		t.Skip("starts member clusters")
	}
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(len(members), 1))
	u.InitFederation("fed")
	u.JoinAll("fed", members...)
	f := &fixture{Fixture: fedenv.NewFixture(t, u, env.Clients(nil), "fed", converge), env: env}
	f.Kubectl("label", "cluster", "cluster1", "tier=one")
	f.Kubectl("create", "namespace", team)
	f.Kubectl("create", "rolebinding", "tenant-admin", "--clusterrole=admin", "--user="+tenant, "-n", team)
	f.addUser(tenant)
	f.waitCanI(tenant, "yes", "create", "roles", "-n", team)

	steps := []struct {
		name string
		run  func(f *fixture)
	}{
		{"a tenant's Role and RoleBindings propagate and grant in the members", propagates},
		{"drift is repaired, the federation's own binding too", drift},
		{"the cluster selector places a Role", selected},
		{"deletion removes the copies", deletion},
		{"refused at the federation", refusedAtFederation},
		{"never written in a namespace the member owns", memberOwnNamespace},
		{"the federation's identity in a member", federationIdentity},
		{"the federation's ServiceAccounts authenticate to it, not to members", serviceAccountTokens},
		{"unjoin removes the federation's RBAC rights", unjoin},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(f.in(t)) }) {
			return
		}
	}
}

func propagates(f *fixture) {
	for _, m := range []string{role(team, "reader", "get, list"), roleBinding(team, "reader", "Role", "reader", "app"), roleBinding(team, "viewers", "ClusterRole", "view", "viewer")} {
		out, err := f.applyAs(tenant, m)
		require.NoError(f.T, err, out)
	}
	f.WaitIn(members, roles, team, "reader", nil)
	f.WaitIn(members, roleBindings, team, "reader", nil)
	f.WaitIn(members, roleBindings, team, "viewers", nil)
	f.WaitIn(members, roleBindings, team, access, func(o *unstructured.Unstructured) error {
		if o.GetLabels()[memberrbac.AccessLabel] != "fed" {
			return fmt.Errorf("labels %v", o.GetLabels())
		}
		return nil
	})
	app := "--as=system:serviceaccount:" + team + ":app"
	for _, c := range members {
		ns, err := f.member(c).CoreV1().Namespaces().Get(context.Background(), team, metav1.GetOptions{})
		require.NoError(f.T, err)
		assert.Equal(f.T, "fed", ns.Labels[memberrbac.CreatedByLabel], "created by the federation, and marked so")
		f.waitCanI(c, "yes", "list", "configmaps", "-n", team, app)
		f.waitCanI(c, "no", "get", "secrets", "-n", team, app)
		f.waitCanI(c, "yes", "get", "pods", "-n", team, "--as=system:serviceaccount:"+team+":viewer")
	}
}

func drift(f *fixture) {
	ctx := context.Background()
	rbac := f.member("cluster1").RbacV1()
	before, err := rbac.Roles(team).Get(ctx, "reader", metav1.GetOptions{})
	require.NoError(f.T, err)
	require.NoError(f.T, rbac.Roles(team).Delete(ctx, "reader", metav1.DeleteOptions{}))
	f.WaitIn([]string{"cluster1"}, roles, team, "reader", func(o *unstructured.Unstructured) error {
		if o.GetUID() == before.UID {
			return fmt.Errorf("not recreated yet")
		}
		return nil
	})

	// Edited there by hand: put back.
	edited, err := f.member("cluster2").RbacV1().Roles(team).Get(ctx, "reader", metav1.GetOptions{})
	require.NoError(f.T, err)
	edited.Rules = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}
	_, err = f.member("cluster2").RbacV1().Roles(team).Update(ctx, edited, metav1.UpdateOptions{})
	require.NoError(f.T, err)
	f.WaitIn([]string{"cluster2"}, roles, team, "reader", func(o *unstructured.Unstructured) error {
		if rules := fmt.Sprint(o.Object["rules"]); contains(rules, "secrets") {
			return fmt.Errorf("rules %s", rules)
		}
		return nil
	})

	// Its own binding deleted in the member: the next write there, refused
	// for want of it, binds it again.
	require.NoError(f.T, rbac.RoleBindings(team).Delete(ctx, access, metav1.DeleteOptions{}))
	out, err := f.applyAs(tenant, role(team, "reader", "get, list, watch"))
	require.NoError(f.T, err, out)
	f.WaitIn(members, roles, team, "reader", func(o *unstructured.Unstructured) error {
		if verbs := fmt.Sprint(o.Object["rules"]); !contains(verbs, "watch") {
			return fmt.Errorf("rules %s", verbs)
		}
		return nil
	})
	f.WaitIn([]string{"cluster1"}, roleBindings, team, access, nil)
}

func selected(f *fixture) {
	manifest := `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: only-one
  namespace: ` + team + `
  annotations:
    federation.alpha.kubernetes.io/cluster-selector: '[{"key":"tier","operator":"in","values":["one"]}]'
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [get]}
`
	out, err := f.applyAs(tenant, manifest)
	require.NoError(f.T, err, out)
	f.WaitIn([]string{"cluster1"}, roles, team, "only-one", nil)
	f.WaitEvents("only-one", "Created Role "+team+"/only-one in cluster cluster1")
	_, err = f.member("cluster2").RbacV1().Roles(team).Get(context.Background(), "only-one", metav1.GetOptions{})
	assert.True(f.T, isNotFound(err), "not placed in cluster2: %v", err)
}

func deletion(f *fixture) {
	for _, args := range [][]string{{"role", "reader"}, {"rolebinding", "reader"}, {"role", "only-one"}} {
		out, err := f.as(tenant, append([]string{"delete", "-n", team}, args...)...)
		require.NoError(f.T, err, out)
	}
	f.WaitAbsent(members, roles, team, "reader")
	f.WaitAbsent(members, roleBindings, team, "reader")
	f.WaitAbsent(members, roles, team, "only-one")
}

func refusedAtFederation(f *fixture) {
	out, err := f.as(tenant, "create", "rolebinding", "root", "--clusterrole=cluster-admin", "--serviceaccount="+team+":app", "-n", team)
	f.refused(out, err, "forbidden")
	// A ClusterRole the tenant holds all of, but members do not let the
	// federation bind: refused at once, naming the field.
	out, err = f.as(tenant, "create", "rolebinding", "agg", "--clusterrole=system:aggregate-to-view", "--serviceaccount="+team+":app", "-n", team)
	f.refused(out, err, `roleRef.name: Unsupported value: "system:aggregate-to-view"`)
	for _, verb := range []string{"escalate", "bind"} {
		out, err = f.applyAs(tenant, roleOn(team, "r-"+verb, "rbac.authorization.k8s.io", "roles", verb))
		f.refused(out, err, "forbidden")
	}
	// impersonate on ServiceAccounts is part of admin: only the
	// federation's admission stops it.
	out, err = f.applyAs(tenant, roleOn(team, "r-impersonate", "", "serviceaccounts", "impersonate"))
	f.refused(out, err, `rules[0].verbs[0]: Forbidden: a propagated Role may not grant`)
	// The federation's own admin is told too.
	out, err = f.applyAs("fed", roleOn(team, "r-escalate", "rbac.authorization.k8s.io", "roles", "escalate"))
	f.refused(out, err, `rules[0].verbs[0]: Forbidden`)
	out, err = f.applyAs(tenant, role("kube-system", "r", "get"))
	f.refused(out, err, "forbidden")
	for _, name := range []string{"root", "agg", "r-escalate", "r-bind", "r-impersonate"} {
		_, err := f.member("cluster1").RbacV1().Roles(team).Get(context.Background(), name, metav1.GetOptions{})
		assert.True(f.T, isNotFound(err), "%s is in no member: %v", name, err)
	}
}

func memberOwnNamespace(f *fixture) {
	ctx := context.Background()
	const own = "member-own"
	_, err := f.member("cluster1").CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: own}}, metav1.CreateOptions{})
	require.NoError(f.T, err)
	f.Kubectl("create", "namespace", own)
	f.Kubectl("create", "rolebinding", "tenant-admin", "--clusterrole=admin", "--user="+tenant, "-n", own)
	f.waitCanI(tenant, "yes", "create", "roles", "-n", own)
	out, err := f.applyAs(tenant, role(own, "sneaky", "get"))
	require.NoError(f.T, err, out)
	f.WaitIn([]string{"cluster2"}, roles, own, "sneaky", nil)
	f.WaitEvents("sneaky", "Role "+own+"/sneaky not written in cluster cluster1: namespace "+own+" in cluster cluster1 was neither created by federation fed nor adopted for it")
	rbac := f.member("cluster1").RbacV1()
	_, err = rbac.Roles(own).Get(ctx, "sneaky", metav1.GetOptions{})
	assert.True(f.T, isNotFound(err), "the member's namespace holds no Role of the federation: %v", err)
	_, err = rbac.RoleBindings(own).Get(ctx, access, metav1.GetOptions{})
	assert.True(f.T, isNotFound(err), "nor its rights: %v", err)
	ns, err := f.member("cluster1").CoreV1().Namespaces().Get(ctx, own, metav1.GetOptions{})
	require.NoError(f.T, err)
	assert.NotContains(f.T, ns.Labels, memberrbac.CreatedByLabel)
}

func federationIdentity(f *fixture) {
	ctx := context.Background()
	fed := f.asFederation("cluster1").RbacV1()
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "app", Namespace: team}}
	toClusterRole := func(ns, name, ref string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ref}, Subjects: subjects}
	}
	_, err := fed.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "root"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}, Subjects: subjects}, metav1.CreateOptions{})
	forbidden(f.T, err, `cannot create resource "clusterrolebindings"`)
	_, err = fed.RoleBindings(team).Create(ctx, toClusterRole(team, "root", "cluster-admin"), metav1.CreateOptions{})
	forbidden(f.T, err, "attempting to grant RBAC permissions not currently held")
	_, err = fed.RoleBindings("member-own").Create(ctx, toClusterRole("member-own", "root", "cluster-admin"), metav1.CreateOptions{})
	forbidden(f.T, err, "")
	// Its own rights, bound by itself where it did not create the namespace.
	self := memberrbac.AccessRoleBinding("fed", "member-own")
	_, err = fed.RoleBindings("member-own").Create(ctx, self, metav1.CreateOptions{})
	forbidden(f.T, err, "may not write Roles or RoleBindings in a namespace it did not create")
	r := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}}
	for _, ns := range []string{"member-own", "default", "kube-system"} {
		_, err = fed.Roles(ns).Create(ctx, r, metav1.CreateOptions{})
		forbidden(f.T, err, "")
	}
	// Where it created the namespace: still never escalate, bind or impersonate.
	escalating := r.DeepCopy()
	escalating.Rules[0].Verbs = []string{"impersonate"}
	_, err = fed.Roles(team).Create(ctx, escalating, metav1.CreateOptions{})
	forbidden(f.T, err, `may not write a Role granting`)
	// Nor can it mark a namespace of the member's as its own.
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:"fed"}}}`, memberrbac.CreatedByLabel)
	_, err = f.asFederation("cluster1").CoreV1().Namespaces().Patch(ctx, "member-own", types.MergePatchType, patch, metav1.PatchOptions{})
	forbidden(f.T, err, "may not mark a namespace")
}

func unjoin(f *fixture) {
	ctx := context.Background()
	f.User.MustKubefed("unjoin", "cluster2", "--context=fed")
	rbac := f.member("cluster2").RbacV1()
	_, err := rbac.ClusterRoles().Get(ctx, access, metav1.GetOptions{})
	assert.True(f.T, isNotFound(err), "ClusterRole %s: %v", access, err)
	left, err := rbac.RoleBindings("").List(ctx, metav1.ListOptions{LabelSelector: memberrbac.AccessLabel})
	require.NoError(f.T, err)
	assert.Empty(f.T, left.Items, "the federation's bindings in its namespaces")
	_, err = rbac.RoleBindings(team).Get(ctx, "viewers", metav1.GetOptions{})
	assert.NoError(f.T, err, "copies stay, as every copy does")
}

// roleOn is a Role granting verb on one resource of group.
func roleOn(ns, name, group, resource, verb string) string {
	return fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: %s, namespace: %s}
rules:
- {apiGroups: [%q], resources: [%s], verbs: [%s]}
`, name, ns, group, resource, verb)
}
