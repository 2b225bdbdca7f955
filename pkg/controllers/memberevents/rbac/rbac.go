// Package rbac declares what the member events controller may do at the
// federation; package managerrbac collects it into the controller
// manager's role. A leaf: it imports no controller.
package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"
)

// ClusterRules: write the mirrored events, and read one back when a
// controller manager that restarted finds it already there. The federated
// objects it names are read with the propagation controllers' rules.
func ClusterRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{rbacv1helpers.NewRule("get", "create", "patch").Groups("").Resources("events").RuleOrDie()}
}
