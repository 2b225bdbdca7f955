package apiserver

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/union"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
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

// Authorizers are what ApplyTo sets up besides the server's authorizer.
type Authorizers struct {
	// Rules lists a user's rules for SelfSubjectRulesReview.
	Rules authorizer.RuleResolver
	// Direct is the server's authorizer without the deferral of the
	// members' proxy (proxyDeferral): the proxy asks it who holds the
	// proxy subresource, and whether the request it forwards is allowed.
	Direct authorizer.Authorizer
}

// ApplyTo sets config's authorizer. Members of system:masters may do
// everything, as on kube-apiserver; federation agents and their bootstrap
// tokens only what agentAuthorizer allows; everyone else as the mode says,
// but that the members' proxy authorizes on its own the requests it
// forwards (proxyDeferral). The RBAC authorizer reads roles and bindings
// from informers, which the server starts.
func (a AuthorizationConfig) ApplyTo(config *genericapiserver.Config, informers informers.SharedInformerFactory) (Authorizers, error) {
	if err := a.Validate(); err != nil {
		return Authorizers{}, err
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
	direct := union.New(authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup), agentAuthorizer{}, mode)
	config.Authorization.Authorizer = union.New(direct, proxyDeferral{})
	// Let the server's own loopback client in.
	genericapiserver.AuthorizeClientBearerToken(config.LoopbackClientConfig, &config.Authentication, &config.Authorization)
	return Authorizers{Rules: mode, Direct: direct}, nil
}

// proxyDeferral lets an authenticated user's request to a member's proxy
// (clusters/NAME/proxy/...) that the federation's RBAC does not allow
// reach the proxy, which authorizes the request it would forward instead
// (package memberproxy). It comes after every other authorizer: agents,
// refused before, stay refused.
type proxyDeferral struct{}

func (proxyDeferral) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if !a.IsResourceRequest() || a.GetAPIGroup() != federationv1beta1.SchemeGroupVersion.Group ||
		a.GetResource() != "clusters" || a.GetSubresource() != "proxy" || a.GetName() == "" || a.GetUser() == nil {
		return authorizer.DecisionNoOpinion, "", nil
	}
	u := a.GetUser()
	if u.GetName() == user.Anonymous || slices.Contains(u.GetGroups(), user.AllUnauthenticated) {
		return authorizer.DecisionNoOpinion, "", nil
	}
	return authorizer.DecisionAllow, "the members' proxy authorizes the request it forwards", nil
}
