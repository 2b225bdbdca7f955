// Package rbac declares what the agent certificates controller may do at
// the federation; package managerrbac collects it. A leaf.
package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// ClusterRules: watch CertificateSigningRequests, approve or deny the
// agents' and write their certificates, delete them once old; bind each to its Cluster (an
// annotation).
func ClusterRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		rbacv1helpers.NewRule("get", "update").Groups(federationv1beta1.SchemeGroupVersion.Group).Resources("clusters").RuleOrDie(),
		rbacv1helpers.NewRule("get", "list", "watch", "delete").Groups("certificates.k8s.io").Resources("certificatesigningrequests").RuleOrDie(),
		rbacv1helpers.NewRule("update").Groups("certificates.k8s.io").
			Resources("certificatesigningrequests/approval", "certificatesigningrequests/status").RuleOrDie(),
	}
}

// SystemNamespaceRules: read the bootstrap tokens, and delete each once
// it got its agent a certificate (single use), in the federation's
// namespace only.
func SystemNamespaceRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{rbacv1helpers.NewRule("get", "list", "watch", "delete").Groups("").Resources("secrets").RuleOrDie()}
}
