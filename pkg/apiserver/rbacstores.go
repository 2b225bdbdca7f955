package apiserver

import (
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrole"
	clusterrolepolicybased "k8s.io/kubernetes/pkg/registry/rbac/clusterrole/policybased"
	clusterrolestore "k8s.io/kubernetes/pkg/registry/rbac/clusterrole/storage"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding"
	clusterrolebindingpolicybased "k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding/policybased"
	clusterrolebindingstore "k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding/storage"
	"k8s.io/kubernetes/pkg/registry/rbac/role"
	rolepolicybased "k8s.io/kubernetes/pkg/registry/rbac/role/policybased"
	rolestore "k8s.io/kubernetes/pkg/registry/rbac/role/storage"
	"k8s.io/kubernetes/pkg/registry/rbac/rolebinding"
	rolebindingpolicybased "k8s.io/kubernetes/pkg/registry/rbac/rolebinding/policybased"
	rolebindingstore "k8s.io/kubernetes/pkg/registry/rbac/rolebinding/storage"
	rbacregistryvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// servedWithAccess reports whether a federated type is served in the RBAC
// group, which the access groups build (rbacStorage), not apiGroups.
func servedWithAccess(t *federatedtypes.Type) bool {
	return t.Resource.Group == rbacv1.GroupName
}

// rbacStorage serves rbac.authorization.k8s.io as Kubernetes' own
// RESTStorageProvider does (its escalation checks in front of every
// storage), except that Roles and RoleBindings, which are federated types,
// record their deletions in tombstones like the other federated types, so
// that their copies follow.
type rbacStorage struct {
	authorizer authorizer.Authorizer
	tombstones *tombstoneWriter
}

// GroupName is the group served.
func (p rbacStorage) GroupName() string { return rbacv1.GroupName }

// NewRESTStorage builds the group's storage.
func (p rbacStorage) NewRESTStorage(_ serverstorage.APIResourceConfigSource, getter generic.RESTOptionsGetter) (genericapiserver.APIGroupInfo, error) {
	info := genericapiserver.NewDefaultAPIGroupInfo(rbacv1.GroupName, legacyscheme.Scheme, legacyscheme.ParameterCodec, legacyscheme.Codecs)
	roles, err := rolestore.NewREST(getter)
	if err != nil {
		return info, err
	}
	roleBindings, err := rolebindingstore.NewREST(getter)
	if err != nil {
		return info, err
	}
	clusterRoles, err := clusterrolestore.NewREST(getter)
	if err != nil {
		return info, err
	}
	clusterRoleBindings, err := clusterrolebindingstore.NewREST(getter)
	if err != nil {
		return info, err
	}
	resolver := rbacregistryvalidation.NewDefaultRuleResolver(
		role.AuthorizerAdapter{Registry: role.NewRegistry(roles)},
		rolebinding.AuthorizerAdapter{Registry: rolebinding.NewRegistry(roleBindings)},
		clusterrole.AuthorizerAdapter{Registry: clusterrole.NewRegistry(clusterRoles)},
		clusterrolebinding.AuthorizerAdapter{Registry: clusterrolebinding.NewRegistry(clusterRoleBindings)},
	)
	tombstoned := map[string]rest.StandardStorage{}
	for name, s := range map[string]rest.Storage{"roles": roles, "rolebindings": roleBindings} {
		t := federatedtypes.ByName(name)
		if t == nil {
			return info, fmt.Errorf("%s is not a federated type", name)
		}
		wrapped, err := withTombstones(t, map[string]rest.Storage{name: s}, p.tombstones)
		if err != nil {
			return info, err
		}
		tombstoned[name] = wrapped[name].(rest.StandardStorage)
	}
	info.VersionedResourcesStorageMap[rbacv1.SchemeGroupVersion.Version] = map[string]rest.Storage{
		"roles":               rolepolicybased.NewStorage(tombstoned["roles"], p.authorizer, resolver),
		"rolebindings":        rolebindingpolicybased.NewStorage(tombstoned["rolebindings"], p.authorizer, resolver),
		"clusterroles":        clusterrolepolicybased.NewStorage(clusterRoles, p.authorizer, resolver),
		"clusterrolebindings": clusterrolebindingpolicybased.NewStorage(clusterRoleBindings, p.authorizer, resolver),
	}
	return info, nil
}
