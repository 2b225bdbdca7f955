// Package rbac declares what the service DNS controller may do at the
// federation; package managerrbac collects it. A leaf.
package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"

	"github.com/federation-v1/federation/pkg/serviceingresses"
)

// ClusterRules: write a Service's members' addresses into its
// service-ingresses subresource.
func ClusterRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{rbacv1helpers.NewRule("update").Groups("").Resources("services/" + serviceingresses.Subresource).RuleOrDie()}
}
