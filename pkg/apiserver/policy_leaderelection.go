package apiserver

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// leaderElectionRole names the role that lets the controller managers elect
// their leader.
const leaderElectionRole = federationv1beta1.ControllerManagerUser + ":leader-election"

// leaderElectionRoles let the controller manager hold its leader lease
// (client-go's Lease lock: get, create, update) in the federation's
// namespace only, as kube-controller-manager may in kube-system. The
// lease's name is a flag of the controller manager, so the rule names none.
func leaderElectionRoles() map[string][]rbacv1.Role {
	role := rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: leaderElectionRole, Namespace: federationv1beta1.SystemNamespace},
		Rules: []rbacv1.PolicyRule{
			rbacv1helpers.NewRule("get", "create", "update").Groups("coordination.k8s.io").Resources("leases").RuleOrDie(),
		},
	}
	withBootstrapMetadata(&role.ObjectMeta)
	return map[string][]rbacv1.Role{federationv1beta1.SystemNamespace: {role}}
}

// leaderElectionRoleBindings bind leaderElectionRole to the controller
// manager.
func leaderElectionRoleBindings() map[string][]rbacv1.RoleBinding {
	binding := rbacv1helpers.NewRoleBinding(leaderElectionRole, federationv1beta1.SystemNamespace).
		Users(federationv1beta1.ControllerManagerUser).BindingOrDie()
	withBootstrapMetadata(&binding.ObjectMeta)
	return map[string][]rbacv1.RoleBinding{federationv1beta1.SystemNamespace: {binding}}
}
