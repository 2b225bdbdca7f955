// Package memberrbac bounds what the federation may do with RBAC in a
// member cluster, where it propagates namespaced Roles and RoleBindings:
// only in namespaces it created there, never rights over RBAC itself or
// over other identities, and never a binding to a ClusterRole outside an
// allow-list. kubefed join grants the rights (AccessClusterRole), the
// member's admission policy enforces the bound whatever the federation
// asks, the propagation controller binds the federation in each namespace
// it created (AccessRoleBinding), and the federation's admission refuses at
// create time what a member would refuse (ValidateRole, ValidateRoleBinding).
package memberrbac

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// CreatedByLabel marks a member namespace the federation created, with
// the federation's name. The federation's identity may set it only when
// it creates the namespace (the member's policy refuses adding or
// changing it later), so an adopted or a member's own namespace never
// carries it unless the member's admins put it there.
const CreatedByLabel = "federation.kubernetes.io/created-by"

// AdoptedByPrefix begins the label (AdoptedByLabel) that marks a member
// namespace an admin adopted for one federation.
const AdoptedByPrefix = "federation.kubernetes.io/adopted-by."

// Adopted is the value of AdoptedByLabel.
const Adopted = "true"

// AdoptedByLabel is the label ("true") that marks a member namespace the
// federation fed did not create but that an admin adopted explicitly for
// it (kubefed join --adopt-namespaces, or a federated Namespace adopted
// with the adoption permission). One label per federation, so that one
// member namespace (its default, say) can be adopted for several. The
// federation writes into a member namespace only if it carries
// CreatedByLabel with its name or its AdoptedByLabel; the member's policy
// lets it set or take off only its own.
func AdoptedByLabel(fed string) string { return AdoptedByPrefix + fed }

// AccessLabel marks the RoleBinding that gives the federation its RBAC
// rights in one namespace, with the federation's name.
const AccessLabel = "federation.kubernetes.io/namespace-access"

// DefaultBindableClusterRoles are the ClusterRoles a propagated
// RoleBinding may refer to: Kubernetes' user-facing roles, which grant
// nothing beyond the namespace they are bound in.
var DefaultBindableClusterRoles = []string{"admin", "edit", "view"}

// RefusedVerbs are the verbs no propagated Role may grant: changing RBAC
// beyond one's own rights (escalate, bind), acting as another identity
// (impersonate), and "*", which includes them.
var RefusedVerbs = []string{rbacv1.VerbAll, "escalate", "bind", "impersonate"}

// AccessName names, after the federation, the ClusterRole of its RBAC
// rights in a namespace and the RoleBinding to it in each namespace.
func AccessName(fed string) string { return "federation-" + fed + "-namespace-rbac" }

// IsAccessBinding reports whether a member object of resource r is the
// RoleBinding of a federation's RBAC rights in its namespace (AccessName):
// it goes with the namespace, and does not keep a namespace the
// federation created from being deleted.
func IsAccessBinding(r schema.GroupResource, obj metav1.Object) bool {
	fed := obj.GetLabels()[AccessLabel]
	return r == rbacv1.Resource("rolebindings") && fed != "" && obj.GetName() == AccessName(fed)
}

// Account is the federation's service account in a member.
func Account(fed string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "federation-" + fed, Namespace: federationv1beta1.SystemNamespace}
}

// AccessClusterRole is what the federation may do with RBAC in a namespace
// it created, once bound there: write Roles and RoleBindings, grant in a
// Role what it does not hold itself (escalate), bind Roles of the
// namespace and the bindable ClusterRoles. The member's policy narrows it
// further (RefusedVerbs, bindable).
func AccessClusterRole(fed string, bindable []string) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: AccessName(fed), Labels: map[string]string{federationv1beta1.FederationLabel: fed}},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles", "rolebindings"},
				Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"}, Verbs: []string{"escalate", "bind"}},
			{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}, ResourceNames: slices.Clone(bindable)},
		},
	}
}

// AccessRoleBinding binds the federation's account to AccessClusterRole in
// namespace ns.
func AccessRoleBinding(fed, ns string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: AccessName(fed), Namespace: ns, Labels: map[string]string{AccessLabel: fed}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: AccessName(fed)},
		Subjects:   []rbacv1.Subject{Account(fed)},
	}
}

// JoinRules are what join's ClusterRole adds for Roles and RoleBindings:
// read them everywhere (the propagation's label-filtered caches), create
// RoleBindings (the member's policy lets it create them only in namespaces
// it created) and bind AccessClusterRole, so that it can bind itself there.
func JoinRules(fed string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles", "rolebindings"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"rolebindings"}, Verbs: []string{"create"}},
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}, ResourceNames: []string{AccessName(fed)}},
	}
}

// ValidateRole refuses, in a Role's rules (the verbs of each), verbs of
// RefusedVerbs.
func ValidateRole(ruleVerbs [][]string) field.ErrorList {
	var errs field.ErrorList
	for i, verbs := range ruleVerbs {
		for j, v := range verbs {
			if slices.Contains(RefusedVerbs, v) {
				errs = append(errs, field.Forbidden(field.NewPath("rules").Index(i).Child("verbs").Index(j),
					"a propagated Role may not grant "+quoted(RefusedVerbs)+" (label it federation.kubernetes.io/local=true to keep it at the federation)"))
			}
		}
	}
	return errs
}

// ValidateRoleBinding refuses a binding to a ClusterRole (kind, name of its
// roleRef) outside bindable.
func ValidateRoleBinding(kind, name string, bindable []string) field.ErrorList {
	if kind != "ClusterRole" || slices.Contains(bindable, name) {
		return nil
	}
	return field.ErrorList{field.NotSupported(field.NewPath("roleRef", "name"), name, bindable)}
}

func quoted(items []string) string {
	out := ""
	for i, s := range items {
		if i > 0 {
			out += ", "
		}
		out += "\"" + s + "\""
	}
	return out
}
