package apiserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// TestOnlyClusterAdminMayAskForAdoption: the right that asking for
// adoption takes (FederationAnnotations) is cluster-admin's alone among
// the bootstrap roles, so that a namespace's admin or editor cannot take
// over or delete what other teams own in the members.
func TestOnlyClusterAdminMayAskForAdoption(t *testing.T) {
	roles := bootstrapPolicy().ClusterRoles
	for _, typ := range federatedtypes.All {
		ns := ""
		if typ.Namespaced {
			ns = "team"
		}
		attrs := authorizer.AttributesRecord{Verb: "update", Namespace: ns, APIGroup: typ.Resource.Group, APIVersion: typ.Resource.Version,
			Resource: typ.Resource.Resource, Subresource: federationv1beta1.AdoptionSubresource, Name: "x", ResourceRequest: true}
		for _, role := range []string{"admin", "edit", "view", federationv1beta1.ControllerManagerUser} {
			assert.False(t, rbac.RulesAllow(attrs, aggregated(roles, role)...), "%s may update %s/%s", role, typ.Resource.GroupResource(), federationv1beta1.AdoptionSubresource)
		}
		assert.True(t, rbac.RulesAllow(attrs, aggregated(roles, "cluster-admin")...), "cluster-admin may update %s/%s", typ.Resource.GroupResource(), federationv1beta1.AdoptionSubresource)
	}
}
