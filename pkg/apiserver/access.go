package apiserver

import (
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	authenticationrest "k8s.io/kubernetes/pkg/registry/authentication/rest"
	authorizationrest "k8s.io/kubernetes/pkg/registry/authorization/rest"
)

// accessGroupVersions are the groups that say who may do what, served
// with Kubernetes' own registries: RBAC (with its escalation checks; its
// Roles and RoleBindings are also federated types, rbacstores.go),
// SubjectAccessReview and SelfSubjectAccessReview/RulesReview (`kubectl
// auth can-i`), TokenReview and SelfSubjectReview (`kubectl auth whoami`).
var accessGroupVersions = []schema.GroupVersion{
	rbacv1.SchemeGroupVersion,
	authorizationv1.SchemeGroupVersion,
	authenticationv1.SchemeGroupVersion,
}

// accessGroups builds the storage of the access groups.
func accessGroups(resources serverstorage.APIResourceConfigSource, getter generic.RESTOptionsGetter,
	authn authenticator.Request, authz authorizer.Authorizer, rules authorizer.RuleResolver, tombstones *tombstoneWriter) ([]*genericapiserver.APIGroupInfo, error) {
	providers := []interface {
		NewRESTStorage(serverstorage.APIResourceConfigSource, generic.RESTOptionsGetter) (genericapiserver.APIGroupInfo, error)
		GroupName() string
	}{
		rbacStorage{authorizer: authz, tombstones: tombstones},
		authorizationrest.RESTStorageProvider{Authorizer: authz, RuleResolver: rules},
		authenticationrest.RESTStorageProvider{Authenticator: authn},
	}
	var groups []*genericapiserver.APIGroupInfo
	for _, p := range providers {
		info, err := p.NewRESTStorage(resources, getter)
		if err != nil {
			return nil, fmt.Errorf("creating %s storage: %w", p.GroupName(), err)
		}
		groups = append(groups, &info)
	}
	return groups, nil
}
