// Package rbac declares what the propagation controllers may do at the
// federation; package managerrbac collects it into the controller
// manager's role. A leaf: it imports no controller.
package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// ClusterRules: watch every federated type and write its finalizers,
// status and annotations (the replica plan, an HPA's target; never create
// or delete one), and record events.
func ClusterRules() []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	for _, t := range federatedtypes.All {
		r := t.Resource.Resource
		rules = append(rules,
			rbacv1helpers.NewRule("get", "list", "watch", "update", "patch").Groups(t.Resource.Group).Resources(r, r+"/status").RuleOrDie())
	}
	return append(rules, rbacv1helpers.NewRule("create", "update", "patch").Groups("", "events.k8s.io").Resources("events").RuleOrDie())
}

// SystemNamespaceRules: delete the tombstones the controllers are done
// with (they read them with their cluster rules), in the federation's
// namespace only.
func SystemNamespaceRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{rbacv1helpers.NewRule("get", "list", "watch", "delete").Groups("").Resources("configmaps").RuleOrDie()}
}
