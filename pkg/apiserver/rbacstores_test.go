package apiserver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/apis/rbac"

	"github.com/federation-v1/federation/pkg/tombstone"
)

// denyAll authorizes nothing, so that only RBAC's escalation check can
// let a write through.
type denyAll struct{}

func (denyAll) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionNoOpinion, "", nil
}

// Roles and RoleBindings, federated types served in the RBAC group, keep
// RBAC's escalation check in front and record their deletions in
// tombstones.
func TestRolesKeepTheEscalationCheckAndRecordTheirDeletions(t *testing.T) {
	f := newDeletionFixture(t)
	w := &tombstoneWriter{configMaps: f.creater, now: time.Now}
	info, err := rbacStorage{authorizer: denyAll{}, tombstones: w}.NewRESTStorage(nil, f.getter)
	require.NoError(t, err)
	stores := info.VersionedResourcesStorageMap["v1"]
	for _, r := range []string{"roles", "rolebindings", "clusterroles", "clusterrolebindings"} {
		require.Contains(t, stores, r)
	}
	roles := stores["roles"].(rest.StandardStorage)
	t.Cleanup(roles.Destroy)
	as := func(u user.Info) context.Context {
		ctx := genericapirequest.WithNamespace(context.Background(), "team")
		ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{IsResourceRequest: true, Verb: "create", APIGroup: rbac.GroupName,
			APIVersion: "v1", Resource: "roles", Namespace: "team"})
		return genericapirequest.WithUser(ctx, u)
	}
	role := &rbac.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "team"},
		Rules: []rbac.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}}

	_, err = roles.Create(as(&user.DefaultInfo{Name: "alice"}), role.DeepCopy(), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	require.Error(t, err)
	assert.True(t, apierrors.IsForbidden(err), "a Role beyond its author's rights: %v", err)
	assert.Contains(t, err.Error(), "attempting to grant RBAC permissions not currently held")

	admin := &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup}}
	created, err := roles.Create(as(admin), role.DeepCopy(), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	require.NoError(t, err)
	_, deleted, err := roles.Delete(as(admin), "r", rest.ValidateAllObjectFunc, background())
	require.NoError(t, err)
	assert.True(t, deleted)
	grave := f.tombstones(t)[tombstone.Name(created.(*rbac.Role).UID)]
	require.NotNil(t, grave, "the deletion is recorded for the copies")
	assert.Equal(t, "roles.rbac.authorization.k8s.io", grave.Labels[tombstone.Label])
}
