package memberrbac

import (
	"net/http"
	"net/url"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/transport"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// ProxyUser is the member identity of a request a tenant sends through the
// federation's proxy (clusters/NAME/proxy): the federation's account
// impersonates it, and the member's RBAC gives it only ProxyClusterRole.
// It is a user name, not an account: nobody holds a credential for it.
func ProxyUser(fed string) string { return "federation-" + fed + "-proxy" }

// ProxyCallerExtra is the user-extra key under which the federation names,
// in the member's audit log, the federation user a proxied request came from.
const ProxyCallerExtra = "federation.kubernetes.io/caller"

// proxyRead are the namespaced kinds a tenant may read in a member through
// the proxy: what kubectl get, describe, events and logs look at. Never
// Secrets (a member's Secrets hold its own service-account tokens and
// other teams' data) and nothing cluster-scoped.
var proxyRead = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"pods", "pods/log", "events", "configmaps", "services", "endpoints",
		"persistentvolumeclaims", "replicationcontrollers", "serviceaccounts", "limitranges", "resourcequotas", "podtemplates"}},
	{APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets", "statefulsets", "daemonsets", "controllerrevisions"}},
	{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}},
	{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers"}},
	{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}},
	{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses", "networkpolicies"}},
	{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}},
	{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}},
}

// ProxyStreams are the pod subresources a tenant may open through the
// proxy. Kubernetes authorizes them as create (and, over websockets, get).
var ProxyStreams = []string{"pods/exec", "pods/attach", "pods/portforward"}

// ProxyClusterRole is everything ProxyUser may do in a member: read the
// kinds of proxyRead and open the pod streams. The federation narrows it
// further per request (the caller's own RBAC at the federation, and only
// in namespaces the federation created or adopted there); the member
// enforces this bound whatever the federation asks.
func ProxyClusterRole(fed string) *rbacv1.ClusterRole {
	rules := make([]rbacv1.PolicyRule, 0, len(proxyRead)+1)
	for _, r := range proxyRead {
		r.Verbs = []string{"get", "list", "watch"}
		rules = append(rules, r)
	}
	rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: ProxyStreams, Verbs: []string{"get", "create"}})
	return &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: ProxyUser(fed), Labels: map[string]string{federationv1beta1.FederationLabel: fed}},
		Rules:      rules,
	}
}

// ProxyClusterRoleBinding binds ProxyUser to ProxyClusterRole.
func ProxyClusterRoleBinding(fed string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: ProxyUser(fed), Labels: map[string]string{federationv1beta1.FederationLabel: fed}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ProxyUser(fed)},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: ProxyUser(fed)}},
	}
}

// ImpersonationRules let the federation's account act as ProxyUser, and
// name the caller in ProxyCallerExtra; no other identity.
func ImpersonationRules(fed string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"users"}, Verbs: []string{"impersonate"}, ResourceNames: []string{ProxyUser(fed)}},
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"userextras/" + ProxyCallerExtra}, Verbs: []string{"impersonate"}},
	}
}

// ImpersonateProxyUser makes a request to a member act as user (which is
// ProxyUser of a federation), naming caller for the member's audit log.
// Whatever impersonation the request asked for before is dropped.
func ImpersonateProxyUser(h http.Header, user, caller string) {
	for name := range h {
		if strings.HasPrefix(strings.ToLower(name), "impersonate-") {
			h.Del(name)
		}
	}
	h.Set(transport.ImpersonateUserHeader, user)
	if caller != "" {
		h.Set(transport.ImpersonateUserExtraHeaderPrefix+url.PathEscape(ProxyCallerExtra), caller)
	}
}
