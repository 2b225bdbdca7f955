package kubefed

import (
	"testing"

	"github.com/stretchr/testify/assert"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// TestTheMemberRoleCoversEveryFederatedType: the join ClusterRole lets the
// federation read and write every type it propagates, in any namespace;
// but RBAC's, whose rights are bounded (package memberrbac).
func TestTheMemberRoleCoversEveryFederatedType(t *testing.T) {
	rules := newMemberAccess("fed").Role.Rules
	for _, typ := range federatedtypes.All {
		if typ.Resource.Group == rbacv1.GroupName {
			continue
		}
		for _, verb := range readWrite {
			attrs := authorizer.AttributesRecord{Verb: verb, Namespace: "team", APIGroup: typ.Resource.Group, APIVersion: typ.Resource.Version,
				Resource: typ.Resource.Resource, ResourceRequest: true}
			if !typ.Namespaced {
				attrs.Namespace = ""
			}
			assert.True(t, rbac.RulesAllow(attrs, rules...), "%s %s", verb, typ.Resource.GroupResource())
		}
	}
	// Still listed only: what the federation does not propagate.
	for _, r := range []string{"replicationcontrollers", "podtemplates"} {
		list := authorizer.AttributesRecord{Verb: "list", Namespace: "team", APIVersion: "v1", Resource: r, ResourceRequest: true}
		create := list
		create.Verb = "create"
		assert.True(t, rbac.RulesAllow(list, rules...), "list %s", r)
		assert.False(t, rbac.RulesAllow(create, rules...), "create %s", r)
	}
}

// TestTheMemberRoleReadsEventsAndOwners: the federation watches the
// members' events in every namespace (package memberevents), and reads the
// objects copies make to find whose an event is: without these rights
// warnings would stay in the members, silently.
func TestTheMemberRoleReadsEventsAndOwners(t *testing.T) {
	rules := newMemberAccess("fed").Role.Rules
	for _, verb := range []string{"get", "list", "watch"} {
		attrs := authorizer.AttributesRecord{Verb: verb, APIVersion: "v1", Resource: "events", ResourceRequest: true}
		assert.True(t, rbac.RulesAllow(attrs, rules...), "%s events in every namespace", verb)
	}
	for _, r := range []struct{ group, resource string }{
		{"", "pods"}, {"", "persistentvolumeclaims"}, {"apps", "replicasets"}, {"batch", "jobs"}, {"discovery.k8s.io", "endpointslices"},
	} {
		attrs := authorizer.AttributesRecord{Verb: "get", Namespace: "team", APIGroup: r.group, APIVersion: "v1", Resource: r.resource, ResourceRequest: true}
		assert.True(t, rbac.RulesAllow(attrs, rules...), "get %s.%s", r.resource, r.group)
	}
}
