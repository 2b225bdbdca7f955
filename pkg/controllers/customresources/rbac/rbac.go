// Package rbac declares what the custom resources controller may do at the
// federation; the federation apiserver keeps a role of these rules for the
// groups of the CRDs there are. A leaf.
package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"
)

// Rules: watch the CRDs and the custom resources of their groups, and
// write their finalizers, status and annotations (never create or delete
// one).
func Rules(groups []string) []rbacv1.PolicyRule {
	verbs := []string{"get", "list", "watch", "update", "patch"}
	rules := []rbacv1.PolicyRule{rbacv1helpers.NewRule(verbs...).Groups("apiextensions.k8s.io").Resources("customresourcedefinitions").RuleOrDie()}
	if len(groups) > 0 {
		rules = append(rules, rbacv1helpers.NewRule(verbs...).Groups(groups...).Resources("*").RuleOrDie())
	}
	return rules
}
