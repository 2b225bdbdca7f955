package apiserver

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"
	rbacrest "k8s.io/kubernetes/pkg/registry/rbac/rest"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/managerrbac"
)

// bootstrapPolicy is the RBAC policy the server keeps in place at every
// start, as kube-apiserver does: Kubernetes' own cluster roles and
// bindings (cluster-admin, the aggregated admin/edit/view, which already
// cover every federated Kubernetes type, system:discovery,
// system:public-info-viewer, ...) plus the federation's own. Kubernetes'
// controller roles are left out: no Kubernetes controller runs here.
func bootstrapPolicy() *rbacrest.PolicyData {
	return &rbacrest.PolicyData{
		ClusterRoles:               append(bootstrappolicy.ClusterRoles(), federationClusterRoles()...),
		ClusterRoleBindings:        append(append(bootstrappolicy.ClusterRoleBindings(), federationClusterRoleBindings()...), customResourcesBinding()),
		Roles:                      controllerManagerRoles(),
		RoleBindings:               controllerManagerRoleBindings(),
		ClusterRolesToAggregate:    map[string]string{},
		ClusterRoleBindingsToSplit: map[string]rbacv1.ClusterRoleBinding{},
	}
}

// controllerManagerRoles are the controller manager's namespaced roles
// (package managerrbac), by namespace.
func controllerManagerRoles() map[string][]rbacv1.Role {
	out := map[string][]rbacv1.Role{}
	for _, r := range managerrbac.Roles() {
		role := rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: r.Name, Namespace: r.Namespace}, Rules: r.Rules}
		withBootstrapMetadata(&role.ObjectMeta)
		out[r.Namespace] = append(out[r.Namespace], role)
	}
	return out
}

// controllerManagerRoleBindings bind each of them to the controller
// manager alone.
func controllerManagerRoleBindings() map[string][]rbacv1.RoleBinding {
	out := map[string][]rbacv1.RoleBinding{}
	for _, r := range managerrbac.Roles() {
		binding := rbacv1helpers.NewRoleBinding(r.Name, r.Namespace).Users(federationv1beta1.ControllerManagerUser).BindingOrDie()
		withBootstrapMetadata(&binding.ObjectMeta)
		out[r.Namespace] = append(out[r.Namespace], binding)
	}
	return out
}

// federationClusterRoles are the federation's own cluster roles: what
// view (and so edit and admin) adds for Clusters, and the controller
// manager's least privilege.
func federationClusterRoles() []rbacv1.ClusterRole {
	roles := []rbacv1.ClusterRole{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "system:federation:aggregate-to-view",
				Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
			Rules: []rbacv1.PolicyRule{
				rbacv1helpers.NewRule("get", "list", "watch").Groups(federationv1beta1.SchemeGroupVersion.Group).Resources("clusters", "clusters/status").RuleOrDie(),
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: federationv1beta1.ControllerManagerUser},
			Rules:      controllerManagerRules(),
		},
	}
	for i := range roles {
		withBootstrapMetadata(&roles[i].ObjectMeta)
	}
	return roles
}

// controllerManagerRules are what federation-controller-manager does at
// the federation: what each of its controllers declares next to itself
// (package managerrbac).
func controllerManagerRules() []rbacv1.PolicyRule {
	return managerrbac.ClusterRules()
}

// federationClusterRoleBindings bind the federation's components to their
// roles by the user names of their client certificates. The controller
// manager is also an auth delegator: it asks who calls its /metrics and
// whether they may (TokenReview, SubjectAccessReview).
func federationClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	own := rbacv1helpers.NewClusterBinding(federationv1beta1.ControllerManagerUser).Users(federationv1beta1.ControllerManagerUser).BindingOrDie()
	delegator := rbacv1helpers.NewClusterBinding("system:auth-delegator").Users(federationv1beta1.ControllerManagerUser).BindingOrDie()
	delegator.Name = federationv1beta1.ControllerManagerUser + ":auth-delegator"
	bindings := []rbacv1.ClusterRoleBinding{own, delegator}
	for i := range bindings {
		withBootstrapMetadata(&bindings[i].ObjectMeta)
	}
	return bindings
}

// withBootstrapMetadata labels and annotates an object as Kubernetes does
// its bootstrap policy, so that it is reconciled at every start unless an
// admin turns autoupdate off.
func withBootstrapMetadata(m *metav1.ObjectMeta) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	for k, v := range bootstrappolicy.Label {
		m.Labels[k] = v
	}
	for k, v := range bootstrappolicy.Annotation {
		m.Annotations[k] = v
	}
}
