// Package rbac declares what the resource quota controller may do at the
// federation; package managerrbac collects it. A leaf.
package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// ClusterRules: count the federation's own objects of every federated type
// into the ResourceQuotas' status.
func ClusterRules() []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	for _, t := range federatedtypes.All {
		rules = append(rules, rbacv1helpers.NewRule("list", "watch").Groups(t.Resource.Group).Resources(t.Resource.Resource).RuleOrDie())
	}
	return append(rules, rbacv1helpers.NewRule("update").Groups("").Resources("resourcequotas/status").RuleOrDie())
}
