package apiserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// aggregated returns the rules of a bootstrap cluster role with those of
// the roles that aggregate into it (edit into admin, view into edit), as
// the role aggregation controller makes them (newRoleAggregation).
func aggregated(roles []rbacv1.ClusterRole, name string) []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	for _, r := range roles {
		if r.Name != name {
			continue
		}
		rules = append(rules, r.Rules...)
		if r.AggregationRule == nil {
			continue
		}
		for _, sel := range r.AggregationRule.ClusterRoleSelectors {
			s := labels.SelectorFromSet(sel.MatchLabels)
			for _, other := range roles {
				if other.Name != name && s.Matches(labels.Set(other.Labels)) {
					rules = append(rules, aggregated(roles, other.Name)...)
				}
			}
		}
	}
	return rules
}

// TestTenantRolesCoverTheFederatedTypes: a namespace's admin, edit and
// view at the federation have on every federated type what Kubernetes'
// admin, edit and view have in a cluster: quotas and limit ranges are
// read-only to them all (a cluster admin sets them), view does not read
// Secrets, and only admin has RBAC.
func TestTenantRolesCoverTheFederatedTypes(t *testing.T) {
	roles := bootstrapPolicy().ClusterRoles
	readOnly := map[string]bool{"resourcequotas": true, "limitranges": true}
	adminOnly := map[string]bool{"roles": true, "rolebindings": true}
	for _, typ := range federatedtypes.All {
		if !typ.Namespaced {
			continue
		}
		r := typ.Resource.Resource
		for _, role := range []string{"admin", "edit", "view"} {
			rules := aggregated(roles, role)
			for _, verb := range []string{"get", "list", "watch", "create", "update", "patch", "delete"} {
				read := verb == "get" || verb == "list" || verb == "watch"
				var want bool
				switch {
				case adminOnly[r]:
					want = role == "admin"
				case role == "view":
					want = read && r != "secrets"
				default:
					want = read || !readOnly[r]
				}
				attrs := authorizer.AttributesRecord{Verb: verb, Namespace: "team", APIGroup: typ.Resource.Group, APIVersion: typ.Resource.Version,
					Resource: r, ResourceRequest: true}
				assert.Equal(t, want, rbac.RulesAllow(attrs, rules...), "%s may %s %s: %v", role, verb, typ.Resource.GroupResource(), want)
			}
		}
	}
}

// TestControllerManagerMayKeepQuotaUsage: the resource quota controller of
// federation-controller-manager (pkg/controllers/federationquota) lists and
// watches every counted type and writes the quotas' status, and nothing
// more of them: it never creates, deletes or changes a quota's spec by
// itself beyond what the propagation controllers already may.
func TestControllerManagerMayKeepQuotaUsage(t *testing.T) {
	rules := controllerManagerRules()
	allowed := func(verb, group, resource, subresource string) bool {
		return rbac.RulesAllow(authorizer.AttributesRecord{Verb: verb, Namespace: "team", APIGroup: group, Resource: resource,
			Subresource: subresource, ResourceRequest: true}, rules...)
	}
	for _, typ := range federatedtypes.All {
		if !typ.Namespaced {
			continue
		}
		for _, verb := range []string{"list", "watch"} {
			assert.True(t, allowed(verb, typ.Resource.Group, typ.Resource.Resource, ""), "%s %s", verb, typ.Resource.GroupResource())
		}
	}
	for _, verb := range []string{"get", "list", "watch"} {
		assert.True(t, allowed(verb, "", "resourcequotas", ""), verb)
	}
	assert.True(t, allowed("update", "", "resourcequotas", "status"))
	assert.False(t, allowed("create", "", "resourcequotas", ""))
	assert.False(t, allowed("delete", "", "resourcequotas", ""))

	// Admission trusts status.used: no tenant role may write it.
	roles := bootstrapPolicy().ClusterRoles
	for _, role := range []string{"admin", "edit", "view"} {
		for _, verb := range []string{"update", "patch"} {
			attrs := authorizer.AttributesRecord{Verb: verb, Namespace: "team", Resource: "resourcequotas", Subresource: "status", ResourceRequest: true}
			assert.False(t, rbac.RulesAllow(attrs, aggregated(roles, role)...), "%s may %s resourcequotas/status", role, verb)
		}
	}
}
