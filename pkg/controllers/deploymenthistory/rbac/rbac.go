// Package rbac declares what the Deployment history controller may do at
// the federation; package managerrbac collects it. A leaf.
package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"
)

// ClusterRules: a Deployment's revision history is kept in local
// ReplicaSets the controller creates and deletes at the federation (and
// reads and updates with the propagation's rules on every federated type).
func ClusterRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{rbacv1helpers.NewRule("create", "delete").Groups("apps").Resources("replicasets").RuleOrDie()}
}
