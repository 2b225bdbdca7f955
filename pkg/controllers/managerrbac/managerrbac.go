// Package managerrbac is what federation-controller-manager may do at the
// federation: the rules each controller declares next to itself (its rbac
// subpackage), collected for the federation apiserver's bootstrap policy,
// and the manager's own (leader election). Adding a controller means
// adding its rbac package here, not editing the apiserver. It imports only
// those leaf packages.
package managerrbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	agentcerts "github.com/federation-v1/federation/pkg/controllers/agentcerts/rbac"
	clusterstatus "github.com/federation-v1/federation/pkg/controllers/clusterstatus/rbac"
	customresources "github.com/federation-v1/federation/pkg/controllers/customresources/rbac"
	deploymenthistory "github.com/federation-v1/federation/pkg/controllers/deploymenthistory/rbac"
	dnspublisher "github.com/federation-v1/federation/pkg/controllers/dnspublisher/rbac"
	federationquota "github.com/federation-v1/federation/pkg/controllers/federationquota/rbac"
	memberevents "github.com/federation-v1/federation/pkg/controllers/memberevents/rbac"
	propagation "github.com/federation-v1/federation/pkg/controllers/propagation/rbac"
	servicedns "github.com/federation-v1/federation/pkg/controllers/servicedns/rbac"
)

// ClusterRules are the controller manager's cluster-wide rules: the union
// of its controllers'.
func ClusterRules() []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	for _, of := range [][]rbacv1.PolicyRule{
		propagation.ClusterRules(),
		federationquota.ClusterRules(),
		deploymenthistory.ClusterRules(),
		servicedns.ClusterRules(),
		clusterstatus.ClusterRules(),
		agentcerts.ClusterRules(),
		memberevents.ClusterRules(),
	} {
		rules = append(rules, of...)
	}
	return rules
}

// Role is a namespaced role of the controller manager.
type Role struct {
	Name, Namespace string
	Rules           []rbacv1.PolicyRule
}

// Roles are the controller manager's namespaced roles, all in the
// federation's namespace: each is bound to it alone.
func Roles() []Role {
	ns := federationv1beta1.SystemNamespace
	user := federationv1beta1.ControllerManagerUser
	return []Role{
		{Name: user, Namespace: ns, Rules: propagation.SystemNamespaceRules()},
		// The leader lease (client-go's Lease lock: get, create, update),
		// as kube-controller-manager's in kube-system; its name is a flag,
		// so the rule names none.
		{Name: user + ":leader-election", Namespace: ns, Rules: []rbacv1.PolicyRule{
			rbacv1helpers.NewRule("get", "create", "update").Groups("coordination.k8s.io").Resources("leases").RuleOrDie()}},
		{Name: user + ":dns-publisher", Namespace: ns, Rules: dnspublisher.SystemNamespaceRules()},
		{Name: user + ":agent-certificates", Namespace: ns, Rules: agentcerts.SystemNamespaceRules()},
	}
}

// CustomResourcesRole names the cluster role the federation apiserver keeps
// for the groups of the CRDs there are (CustomResourcesRules).
const CustomResourcesRole = federationv1beta1.ControllerManagerUser + ":custom-resources"

// CustomResourcesRules are the custom resources controller's rules for
// groups.
func CustomResourcesRules(groups []string) []rbacv1.PolicyRule { return customresources.Rules(groups) }
