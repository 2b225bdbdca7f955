// Package rbac declares what the DNS publisher may do at the federation;
// package managerrbac collects it. A leaf.
package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// SystemNamespaceRules: keep the one ConfigMap federationv1beta1.DNSConfigMap
// in the federation's namespace, by server-side apply: a create by apply is
// authorized with the object's name (a plain create is not, so it could
// not be held to one name), and list and watch with a metadata.name field
// selector are too.
func SystemNamespaceRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{rbacv1helpers.NewRule("get", "list", "watch", "create", "patch").Groups("").Resources("configmaps").
		Names(federationv1beta1.DNSConfigMap).RuleOrDie()}
}
