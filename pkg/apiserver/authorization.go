package apiserver

import (
	"fmt"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/union"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"
)

// Authorization modes of --authorization-mode.
const (
	// ModeRBAC authorizes with the roles and bindings of
	// rbac.authorization.k8s.io, as kube-apiserver does.
	ModeRBAC = "RBAC"
	// ModeAlwaysAllow lets every authenticated request through: for
	// trying things out only.
	ModeAlwaysAllow = "AlwaysAllow"
)

// AuthorizationConfig says how requests are authorized.
type AuthorizationConfig struct {
	// Mode is ModeRBAC or ModeAlwaysAllow.
	Mode string
}

// Validate reports an unknown mode.
func (a AuthorizationConfig) Validate() error {
	switch a.Mode {
	case ModeRBAC, ModeAlwaysAllow:
		return nil
	}
	return fmt.Errorf("--authorization-mode %q: want %s or %s", a.Mode, ModeRBAC, ModeAlwaysAllow)
}

// ApplyTo sets config's authorizer and returns its rule resolver (for
// SelfSubjectRulesReview). Members of system:masters may do everything, as
// on kube-apiserver; federation agents and their bootstrap tokens only
// what agentAuthorizer allows; everyone else as the mode says. The RBAC authorizer
// reads roles and bindings from informers, which the server starts.
func (a AuthorizationConfig) ApplyTo(config *genericapiserver.Config, informers informers.SharedInformerFactory) (authorizer.RuleResolver, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	var mode interface {
		authorizer.Authorizer
		authorizer.RuleResolver
	}
	switch a.Mode {
	case ModeAlwaysAllow:
		mode = authorizerfactory.NewAlwaysAllowAuthorizer()
	default:
		rbacInformers := informers.Rbac().V1()
		mode = rbac.New(
			&rbac.RoleGetter{Lister: rbacInformers.Roles().Lister()},
			&rbac.RoleBindingLister{Lister: rbacInformers.RoleBindings().Lister()},
			&rbac.ClusterRoleGetter{Lister: rbacInformers.ClusterRoles().Lister()},
			&rbac.ClusterRoleBindingLister{Lister: rbacInformers.ClusterRoleBindings().Lister()},
		)
	}
	config.Authorization.Authorizer = union.New(authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup), agentAuthorizer{}, mode)
	// Let the server's own loopback client in.
	genericapiserver.AuthorizeClientBearerToken(config.LoopbackClientConfig, &config.Authentication, &config.Authorization)
	return mode, nil
}
