package kubefed

import (
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/memberrbac"
)

// memberAccess are the objects join creates in a member so that the
// federation can manage it: an account, only the rights the federated types
// and health checks need, a long-lived token, and the admission policy that
// bounds what the account may do with them.
type memberAccess struct {
	Namespace     *corev1.Namespace
	Account       *corev1.ServiceAccount
	Role          *rbacv1.ClusterRole
	Binding       *rbacv1.ClusterRoleBinding
	TokenSecret   *corev1.Secret
	Policy        *admissionregistrationv1.ValidatingAdmissionPolicy
	PolicyBinding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
	// NamespaceRBAC is the federation's RBAC rights in a namespace it
	// created, bound there by the propagation (package memberrbac).
	NamespaceRBAC *rbacv1.ClusterRole
	// ProxyRole and ProxyBinding bound what a tenant's request through the
	// federation's proxy may do in the member (memberrbac.ProxyUser).
	ProxyRole    *rbacv1.ClusterRole
	ProxyBinding *rbacv1.ClusterRoleBinding
}

// accessName is the name of every member-side object of federation fed.
func accessName(fed string) string { return "federation-" + fed }

// readWrite are the verbs on the types the federation propagates.
var readWrite = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
var readOnly = []string{"get", "list", "watch"}

// memberRules: the federated types in full, and read access to what health,
// capacity, DNS and the members' events look at. Not `*` on `*/*`, as v1 had; and nothing on RBAC
// or admissionregistration, so that the federation cannot widen its rights
// nor lift the policy join installs.
var memberRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"namespaces", "configmaps", "secrets", "services", "serviceaccounts",
		"persistentvolumeclaims", "limitranges", "resourcequotas"}, Verbs: readWrite},
	{APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets", "daemonsets", "statefulsets"}, Verbs: readWrite},
	{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses", "networkpolicies"}, Verbs: readWrite},
	{APIGroups: []string{"batch"}, Resources: []string{"jobs", "cronjobs"}, Verbs: readWrite},
	{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers"}, Verbs: readWrite},
	{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: readWrite},
	{APIGroups: []string{""}, Resources: []string{"nodes", "pods", "endpoints"}, Verbs: readOnly},
	{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: readOnly},
	// Events are read (get, list, watch) to bring the members' warnings
	// about copies to the federated objects (package memberevents).
	{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"get", "list", "watch", "create", "patch", "update"}},
	// Listed only, so that deleting a namespace the federation created can
	// tell whether a team put objects of its own in it (the namespace is
	// then left, not deleted with them).
	{APIGroups: []string{""}, Resources: []string{"replicationcontrollers", "podtemplates"}, Verbs: []string{"list"}},
	{APIGroups: []string{"apps"}, Resources: []string{"controllerrevisions"}, Verbs: []string{"list"}},
	{NonResourceURLs: []string{"/readyz", "/healthz", "/livez", "/version"}, Verbs: []string{"get"}},
}

func newMemberAccess(fed string) *memberAccess {
	name := accessName(fed)
	ns := federationv1beta1.SystemNamespace
	meta := func(namespace string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{federationv1beta1.FederationLabel: fed}}
	}
	token := meta(ns)
	token.Name = name + "-token"
	token.Annotations = map[string]string{corev1.ServiceAccountNameKey: name}
	policy, policyBinding := newMemberPolicy(fed, accountUsername(ns, name), meta(""))
	a := &memberAccess{
		Namespace: &corev1.Namespace{TypeMeta: typeMeta("v1", "Namespace"), ObjectMeta: metav1.ObjectMeta{Name: ns}},
		Account:   &corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"), ObjectMeta: meta(ns)},
		Role:      &rbacv1.ClusterRole{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"), ObjectMeta: meta(""), Rules: memberRules},
		Binding: &rbacv1.ClusterRoleBinding{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
			ObjectMeta: meta(""),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
		},
		TokenSecret:   &corev1.Secret{TypeMeta: typeMeta("v1", "Secret"), ObjectMeta: token, Type: corev1.SecretTypeServiceAccountToken},
		Policy:        policy,
		PolicyBinding: policyBinding,
	}
	a.Role.Rules = append(append(slices.Clone(memberRules), memberrbac.JoinRules(fed)...), memberrbac.ImpersonationRules(fed)...)
	a.NamespaceRBAC = memberrbac.AccessClusterRole(fed, memberrbac.DefaultBindableClusterRoles)
	a.ProxyRole, a.ProxyBinding = memberrbac.ProxyClusterRole(fed), memberrbac.ProxyClusterRoleBinding(fed)
	return a
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}
