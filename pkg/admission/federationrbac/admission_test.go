package federationrbac

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/rbac"
)

func TestValidate(t *testing.T) {
	role := func(ns string, labels map[string]string, verbs ...string) *rbac.Role {
		return &rbac.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns, Labels: labels},
			Rules: []rbac.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}, {APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: verbs}}}
	}
	binding := func(ns, kind, name string, labels map[string]string) *rbac.RoleBinding {
		return &rbac.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: ns, Labels: labels}, RoleRef: rbac.RoleRef{APIGroup: rbac.GroupName, Kind: kind, Name: name}}
	}
	local := map[string]string{"federation.kubernetes.io/local": "true"}
	for _, c := range []struct {
		name      string
		obj       runtime.Object
		wantField string
	}{
		{"a Role reading pods", role("team-a", nil, "get", "list"), ""},
		{"a Role granting escalate", role("team-a", nil, "get", "escalate"), `rules[1].verbs[1]: Forbidden`},
		{"a Role granting bind", role("team-a", nil, "bind"), `rules[1].verbs[0]: Forbidden`},
		{"a Role granting impersonate", role("team-a", nil, "impersonate"), `rules[1].verbs[0]: Forbidden`},
		{"a Role granting *", role("team-a", nil, "*"), `rules[1].verbs[0]: Forbidden`},
		{"a local Role granting bind", role("team-a", local, "bind"), ""},
		{"a Role granting bind in kube-system", role("kube-system", nil, "bind"), ""},
		{"a binding to edit", binding("team-a", "ClusterRole", "edit", nil), ""},
		{"a binding to a Role", binding("team-a", "Role", "anything", nil), ""},
		{"a binding to cluster-admin", binding("team-a", "ClusterRole", "cluster-admin", nil), `roleRef.name: Unsupported value: "cluster-admin": supported values: "admin", "edit", "view"`},
		{"a local binding to cluster-admin", binding("team-a", "ClusterRole", "cluster-admin", local), ""},
		{"a binding to cluster-admin in federation-system", binding("federation-system", "ClusterRole", "cluster-admin", nil), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := meta.Accessor(c.obj)
			require.NoError(t, err)
			resource := rbac.Resource("roles").WithVersion("v1")
			kind := rbac.Kind("Role").WithVersion("v1")
			if _, ok := c.obj.(*rbac.RoleBinding); ok {
				resource, kind = rbac.Resource("rolebindings").WithVersion("v1"), rbac.Kind("RoleBinding").WithVersion("v1")
			}
			for _, op := range []admission.Operation{admission.Create, admission.Update} {
				attrs := admission.NewAttributesRecord(c.obj, nil, kind, m.GetNamespace(), m.GetName(), resource, "", op, nil, false, &user.DefaultInfo{Name: "alice"})
				err := New().Validate(context.Background(), attrs, nil)
				if c.wantField == "" {
					assert.NoError(t, err)
					continue
				}
				require.Error(t, err)
				assert.True(t, apierrors.IsInvalid(err), "a 422: %v", err)
				assert.Contains(t, err.Error(), c.wantField)
			}
		})
	}
}

func TestOtherResourcesAreNotLookedAt(t *testing.T) {
	cm := &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "team-a"}}
	attrs := admission.NewAttributesRecord(cm, nil, api.Kind("ConfigMap").WithVersion("v1"), "team-a", "c", api.Resource("configmaps").WithVersion("v1"), "",
		admission.Create, nil, false, &user.DefaultInfo{Name: "alice"})
	assert.NoError(t, New().Validate(context.Background(), attrs, nil))
	assert.False(t, New().Handles(admission.Delete), "deletions are not refused")
}

// newPlugin returns the plugin with the namespaces team-a, team-b and
// kept (local) at the federation.
func newPlugin(t *testing.T) *Plugin {
	t.Helper()
	client := fake.NewSimpleClientset(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kept", Labels: map[string]string{"federation.kubernetes.io/local": "true"}}},
	)
	p := New()
	p.SetExternalKubeInformerFactory(informers.NewSharedInformerFactory(client, 0))
	p.SetExternalKubeClientSet(client)
	require.NoError(t, p.ValidateInitialization())
	return p
}

func TestSubjects(t *testing.T) {
	p := newPlugin(t)
	binding := func(labels map[string]string, subjects ...rbac.Subject) *rbac.RoleBinding {
		return &rbac.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "team-a", Labels: labels},
			RoleRef: rbac.RoleRef{APIGroup: rbac.GroupName, Kind: "ClusterRole", Name: "admin"}, Subjects: subjects}
	}
	group := func(name string) rbac.Subject {
		return rbac.Subject{Kind: rbac.GroupKind, APIGroup: rbac.GroupName, Name: name}
	}
	usr := func(name string) rbac.Subject {
		return rbac.Subject{Kind: rbac.UserKind, APIGroup: rbac.GroupName, Name: name}
	}
	sa := func(ns, name string) rbac.Subject {
		return rbac.Subject{Kind: rbac.ServiceAccountKind, Namespace: ns, Name: name}
	}
	local := map[string]string{"federation.kubernetes.io/local": "true"}
	const keep = "(label the RoleBinding federation.kubernetes.io/local=true to keep it at the federation)"
	for _, c := range []struct {
		name string
		obj  *rbac.RoleBinding
		old  *rbac.RoleBinding
		want []string // in the 422, or none for allowed
	}{
		{name: "a user and a group", obj: binding(nil, usr("alice"), group("team-a-devs"))},
		{name: "system:unauthenticated", obj: binding(nil, usr("alice"), group("system:unauthenticated")),
			want: []string{`subjects[1].name: Forbidden: a propagated RoleBinding may not name the group "system:unauthenticated"`, keep}},
		{name: "system:authenticated", obj: binding(nil, group("system:authenticated")), want: []string{`subjects[0].name: Forbidden`}},
		{name: "system:serviceaccounts", obj: binding(nil, group("system:serviceaccounts")), want: []string{`subjects[0].name: Forbidden`}},
		{name: "system:serviceaccounts:team-a", obj: binding(nil, group("system:serviceaccounts:team-a")), want: []string{`subjects[0].name: Forbidden`}},
		{name: "system:masters", obj: binding(nil, group("system:masters")), want: []string{`subjects[0].name: Forbidden`}},
		{name: "system:anonymous", obj: binding(nil, usr("system:anonymous")),
			want: []string{`subjects[0].name: Forbidden: a propagated RoleBinding may not name the user "system:anonymous"`}},
		{name: "a service account by its user name", obj: binding(nil, usr("system:serviceaccount:kube-system:default")), want: []string{`subjects[0].name: Forbidden`}},
		{name: "a local binding to system:unauthenticated", obj: binding(local, group("system:unauthenticated"))},
		{name: "a service account of the binding's namespace", obj: binding(nil, sa("team-a", "app"))},
		{name: "a service account with no namespace", obj: binding(nil, sa("", "app"))},
		{name: "a service account of another propagated namespace", obj: binding(nil, sa("team-b", "app"))},
		{name: "a service account of kube-system", obj: binding(nil, sa("kube-system", "default")),
			want: []string{`subjects[0].namespace: Forbidden: a propagated RoleBinding may not name a service account of the namespace "kube-system": the federation never propagates it`, keep}},
		{name: "a service account of federation-system", obj: binding(nil, sa("federation-system", "x")), want: []string{`subjects[0].namespace: Forbidden`}},
		{name: "a service account of kube-node-lease", obj: binding(nil, sa("kube-node-lease", "x")), want: []string{`subjects[0].namespace: Forbidden`}},
		{name: "a service account of kube-public", obj: binding(nil, sa("kube-public", "x")), want: []string{`subjects[0].namespace: Forbidden`}},
		{name: "a service account of a namespace the federation has not", obj: binding(nil, sa("payments", "x")),
			want: []string{`subjects[0].namespace: Forbidden: a propagated RoleBinding may not name a service account of the namespace "payments": it does not exist at the federation`}},
		{name: "a service account of a local namespace", obj: binding(nil, sa("kept", "x")),
			want: []string{`subjects[0].namespace: Forbidden: a propagated RoleBinding may not name a service account of the namespace "kept": it is labelled federation.kubernetes.io/local=true`}},
		{name: "an update that keeps a subject it had", obj: binding(nil, group("system:authenticated"), sa("payments", "x")),
			old: binding(nil, group("system:authenticated"), sa("payments", "x"))},
		{name: "an update that adds one", obj: binding(nil, group("system:authenticated"), group("system:masters")),
			old: binding(nil, group("system:authenticated")), want: []string{`subjects[1].name: Forbidden`}},
		{name: "an update that makes a local binding propagated", obj: binding(nil, group("system:authenticated")),
			old: binding(local, group("system:authenticated")), want: []string{`subjects[0].name: Forbidden`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			op := admission.Create
			var old runtime.Object
			if c.old != nil {
				op, old = admission.Update, c.old
			}
			attrs := admission.NewAttributesRecord(c.obj, old, rbac.Kind("RoleBinding").WithVersion("v1"), "team-a", "b",
				rbac.Resource("rolebindings").WithVersion("v1"), "", op, nil, false, &user.DefaultInfo{Name: "bob"})
			err := p.Validate(context.Background(), attrs, nil)
			if len(c.want) == 0 {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsInvalid(err), "a 422: %v", err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestValidateInitialization(t *testing.T) {
	assert.ErrorContains(t, New().ValidateInitialization(), PluginName)
}
