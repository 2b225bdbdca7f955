package apiserver

import (
	"context"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// agentAuthorizer decides every request of a federation agent and of an
// agent's bootstrap token, before RBAC: what it allows is all they may do,
// and it denies the rest (DecisionDeny), so that no RBAC binding, not even
// one to system:authenticated, gives them more.
//
// An agent (system:federation:agent:CLUSTER, group
// system:federation:agents) may open its own cluster's tunnel (get
// clusters/tunnel of CLUSTER in the federation group), and create
// CertificateSigningRequests and read them by name (get; list and watch
// with a metadata.name field selector, as client-go's certificate manager
// waits for its request), to renew its certificate. A bootstrap token of
// system:bootstrappers:federation-agents may create and read
// CertificateSigningRequests likewise, and ask who it is
// (SelfSubjectReview). Both may read the public health and version paths,
// which anyone may read anonymously.
//
// Everyone else is left to RBAC (DecisionNoOpinion).
type agentAuthorizer struct{}

// publicPaths are readable by anyone (system:public-info-viewer).
var publicPaths = []string{"/healthz", "/livez", "/readyz", "/version", "/version/"}

func (agentAuthorizer) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	u := a.GetUser()
	if u == nil {
		return authorizer.DecisionNoOpinion, "", nil
	}
	groups := u.GetGroups()
	_, agentName := federationv1beta1.AgentCluster(u.GetName())
	switch {
	case agentName || slices.Contains(groups, federationv1beta1.AgentGroup):
		return authorizeAgent(u, a)
	case slices.Contains(groups, federationv1beta1.AgentBootstrapGroup):
		return authorizeAgentBootstrap(a)
	}
	return authorizer.DecisionNoOpinion, "", nil
}

const (
	allowed = ""
	// agentDenied says why an agent was refused.
	agentDenied = "federation agents may only open their own cluster's tunnel and request their certificates"
	// bootstrapDenied says why a bootstrap token was refused.
	bootstrapDenied = "federation agent bootstrap tokens may only request an agent's certificate"
)

// authorizeAgent lets an agent open its own tunnel and renew its
// certificate, nothing else.
func authorizeAgent(u user.Info, a authorizer.Attributes) (authorizer.Decision, string, error) {
	cluster, ok := federationv1beta1.AgentCluster(u.GetName())
	if !ok || !onlyAgentGroups(u.GetGroups()) {
		return authorizer.DecisionDeny, "not a federation agent identity: " + agentDenied, nil
	}
	if publicRead(a) || csrRequest(a) {
		return authorizer.DecisionAllow, allowed, nil
	}
	if a.IsResourceRequest() && a.GetVerb() == "get" && a.GetAPIGroup() == federationv1beta1.SchemeGroupVersion.Group &&
		a.GetResource() == "clusters" && a.GetSubresource() == "tunnel" && a.GetName() == cluster && a.GetNamespace() == "" {
		return authorizer.DecisionAllow, allowed, nil
	}
	return authorizer.DecisionDeny, agentDenied, nil
}

// onlyAgentGroups: the agent's groups as the authenticators make them, its
// own plus system:authenticated.
func onlyAgentGroups(groups []string) bool {
	for _, g := range groups {
		if g != federationv1beta1.AgentGroup && g != user.AllAuthenticated {
			return false
		}
	}
	return slices.Contains(groups, federationv1beta1.AgentGroup)
}

// authorizeAgentBootstrap lets a bootstrap token request a certificate
// and ask who it is, nothing else.
func authorizeAgentBootstrap(a authorizer.Attributes) (authorizer.Decision, string, error) {
	if publicRead(a) || csrRequest(a) {
		return authorizer.DecisionAllow, allowed, nil
	}
	if a.IsResourceRequest() && a.GetVerb() == "create" && a.GetAPIGroup() == "authentication.k8s.io" &&
		a.GetResource() == "selfsubjectreviews" && a.GetSubresource() == "" {
		return authorizer.DecisionAllow, allowed, nil
	}
	return authorizer.DecisionDeny, bootstrapDenied, nil
}

// csrRequest: create a CertificateSigningRequest, or read one by name (get,
// or list and watch with a metadata.name field selector); never its
// approval or status, never others' by listing.
func csrRequest(a authorizer.Attributes) bool {
	if !a.IsResourceRequest() || a.GetAPIGroup() != certificatesv1.GroupName ||
		a.GetResource() != "certificatesigningrequests" || a.GetSubresource() != "" {
		return false
	}
	switch a.GetVerb() {
	case "create":
		return true
	case "get", "list", "watch":
		return a.GetName() != ""
	}
	return false
}

// publicRead: GET of a health or version path.
func publicRead(a authorizer.Attributes) bool {
	return !a.IsResourceRequest() && a.GetVerb() == "get" && slices.Contains(publicPaths, a.GetPath())
}
