package federationrbac

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
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
