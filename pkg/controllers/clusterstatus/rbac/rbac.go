// Package rbac declares what the cluster status controller may do at the
// federation; package managerrbac collects it. A leaf.
package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// ClusterRules: watch the Clusters and keep their status, and reach agent
// members through their tunnels (clusters/NAME/proxy), for the probes and
// for every controller's member clients.
func ClusterRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		rbacv1helpers.NewRule("get", "list", "watch", "update", "patch").
			Groups(federationv1beta1.SchemeGroupVersion.Group).Resources("clusters", "clusters/status").RuleOrDie(),
		rbacv1helpers.NewRule("get", "create", "update", "patch", "delete").
			Groups(federationv1beta1.SchemeGroupVersion.Group).Resources("clusters/proxy").RuleOrDie(),
	}
}
