package kubefed

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
)

func TestJoinWithoutCustomResourceGroupsOnlyReadsCRDs(t *testing.T) {
	a := newMemberAccess("fed")
	policies := len(a.Policy.Spec.Validations)
	withCustomResourceGroups(a, "fed", nil)
	assert.Contains(t, a.Role.Rules, rbacv1.PolicyRule{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: readOnly})
	for _, r := range a.Role.Rules {
		if len(r.APIGroups) > 0 && r.APIGroups[0] == "apiextensions.k8s.io" {
			assert.Equal(t, readOnly, r.Verbs)
		}
		assert.NotContains(t, r.Resources, "*", "no rights on every resource of a group without the flag")
	}
	assert.Len(t, a.Policy.Spec.Validations, policies)
}

func TestJoinWithCustomResourceGroupsWritesOnlyTheirCRDs(t *testing.T) {
	a := newMemberAccess("fed")
	withCustomResourceGroups(a, "fed", []string{"certs.example.com", "cert-manager.io"})
	assert.Contains(t, a.Role.Rules, rbacv1.PolicyRule{APIGroups: []string{"certs.example.com", "cert-manager.io"}, Resources: []string{"*"}, Verbs: readWrite})
	assert.Contains(t, a.Role.Rules, rbacv1.PolicyRule{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: readWrite})

	fedUser := accountUsername(a.Account.Namespace, a.Account.Name)
	v := compile(t, a.Policy)
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd := func(group string) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "x." + group}, Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: group}}
	}
	req := func(name string, op admission.Operation, group, userName, refused string) request {
		r := request{name: name, user: userName, op: op, resource: crds, kind: "CustomResourceDefinition", objName: "x." + group, refused: refused}
		switch op {
		case admission.Create:
			r.obj = crd(group)
		case admission.Update:
			r.obj, r.old = crd(group), crd(group)
		case admission.Delete:
			r.old = crd(group)
		}
		return r
	}
	for _, r := range []request{
		req("creating a CRD of a named group", admission.Create, "certs.example.com", fedUser, ""),
		req("updating a CRD of a named group", admission.Update, "cert-manager.io", fedUser, ""),
		req("deleting a CRD of a named group", admission.Delete, "certs.example.com", fedUser, ""),
		req("creating a CRD of another group", admission.Create, "other.example.com", fedUser, "may write only the CustomResourceDefinitions of the groups certs.example.com, cert-manager.io"),
		req("deleting a CRD of Kubernetes", admission.Delete, "gateway.networking.k8s.io", fedUser, "may write only"),
		req("a member admin's CRD", admission.Delete, "gateway.networking.k8s.io", "admin", ""),
	} {
		t.Run(r.name, func(t *testing.T) {
			refusals := decide(t, v, r)
			if r.refused == "" {
				assert.Empty(t, refusals)
				return
			}
			require.Len(t, refusals, 1)
			assert.Contains(t, refusals[0], r.refused)
		})
	}
}

func TestCustomResourceGroupsRefusesKubernetesGroupsAndWildcards(t *testing.T) {
	require.NoError(t, validateCustomResourceGroups([]string{"certs.example.com", "cert-manager.io"}))
	for _, g := range []string{"*", "", "apps", "gateway.networking.k8s.io", "k8s.io", "x.kubernetes.io", "Bad_Group.io"} {
		err := validateCustomResourceGroups([]string{g})
		require.Error(t, err, g)
		assert.Contains(t, err.Error(), "--custom-resource-groups")
	}
}
