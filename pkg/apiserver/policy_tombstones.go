package apiserver

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// federationRoles are the federation's own namespaced roles, by namespace:
// the controller manager deletes the tombstones it is done with (it reads
// them with its cluster role), in the federation's namespace only.
func federationRoles() map[string][]rbacv1.Role {
	role := rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: federationv1beta1.ControllerManagerUser, Namespace: federationv1beta1.SystemNamespace},
		Rules: []rbacv1.PolicyRule{
			rbacv1helpers.NewRule("get", "list", "watch", "delete").Groups("").Resources("configmaps").RuleOrDie(),
		},
	}
	withBootstrapMetadata(&role.ObjectMeta)
	return map[string][]rbacv1.Role{federationv1beta1.SystemNamespace: {role}}
}

// federationRoleBindings bind the federation's namespaced roles to its
// components.
func federationRoleBindings() map[string][]rbacv1.RoleBinding {
	binding := rbacv1helpers.NewRoleBinding(federationv1beta1.ControllerManagerUser, federationv1beta1.SystemNamespace).
		Users(federationv1beta1.ControllerManagerUser).BindingOrDie()
	withBootstrapMetadata(&binding.ObjectMeta)
	return map[string][]rbacv1.RoleBinding{federationv1beta1.SystemNamespace: {binding}}
}
