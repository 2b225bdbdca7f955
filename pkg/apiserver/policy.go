package apiserver

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"
	rbacrest "k8s.io/kubernetes/pkg/registry/rbac/rest"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/serviceingresses"
)

// bootstrapPolicy is the RBAC policy the server keeps in place at every
// start, as kube-apiserver does: Kubernetes' own cluster roles and
// bindings (cluster-admin, the aggregated admin/edit/view, which already
// cover every federated Kubernetes type, system:discovery,
// system:public-info-viewer, ...) plus the federation's own. Kubernetes'
// controller roles are left out: no Kubernetes controller runs here.
func bootstrapPolicy() *rbacrest.PolicyData {
	return &rbacrest.PolicyData{
		ClusterRoles:               append(bootstrappolicy.ClusterRoles(), federationClusterRoles()...),
		ClusterRoleBindings:        append(append(bootstrappolicy.ClusterRoleBindings(), federationClusterRoleBindings()...), customResourcesBinding()),
		Roles:                      byNamespace(federationRoles(), leaderElectionRoles(), dnsPublisherRoles()),
		RoleBindings:               byNamespace(federationRoleBindings(), leaderElectionRoleBindings(), dnsPublisherRoleBindings()),
		ClusterRolesToAggregate:    map[string]string{},
		ClusterRoleBindingsToSplit: map[string]rbacv1.ClusterRoleBinding{},
	}
}

// byNamespace merges namespaced roles or bindings given by namespace.
func byNamespace[T any](sets ...map[string][]T) map[string][]T {
	out := map[string][]T{}
	for _, set := range sets {
		for ns, items := range set {
			out[ns] = append(out[ns], items...)
		}
	}
	return out
}

// federationClusterRoles are the federation's own cluster roles: what
// view (and so edit and admin) adds for Clusters, and the controller
// manager's least privilege.
func federationClusterRoles() []rbacv1.ClusterRole {
	roles := []rbacv1.ClusterRole{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "system:federation:aggregate-to-view",
				Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
			Rules: []rbacv1.PolicyRule{
				rbacv1helpers.NewRule("get", "list", "watch").Groups(federationv1beta1.SchemeGroupVersion.Group).Resources("clusters", "clusters/status").RuleOrDie(),
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: federationv1beta1.ControllerManagerUser},
			Rules:      controllerManagerRules(),
		},
	}
	for i := range roles {
		withBootstrapMetadata(&roles[i].ObjectMeta)
	}
	return roles
}

// controllerManagerRules are what federation-controller-manager does at
// the federation: watch every federated type and write its finalizers,
// status and service-ingresses annotation (never create or delete one),
// keep Deployments' revision history (create and delete the local
// ReplicaSets of it, write the revision annotation, perform rollbacks),
// keep Clusters' status, read the members' credentials, record events.
// Listing and watching every federated type and updating resourcequotas/status
// is also all the resource quota controller needs (the federation's own
// object counts in the quotas' status: pkg/controllers/federationquota).
func controllerManagerRules() []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	for _, t := range federatedtypes.All {
		r := t.Resource.Resource
		rules = append(rules,
			rbacv1helpers.NewRule("get", "list", "watch", "update", "patch").Groups(t.Resource.Group).Resources(r, r+"/status").RuleOrDie())
	}
	return append(rules,
		// A Deployment's revision history: local ReplicaSets the controller
		// manager creates and deletes at the federation (deploymenthistory).
		rbacv1helpers.NewRule("create", "delete").Groups("apps").Resources("replicasets").RuleOrDie(),
		rbacv1helpers.NewRule("update").Groups("").Resources("services/"+serviceingresses.Subresource).RuleOrDie(),
		rbacv1helpers.NewRule("get", "list", "watch", "update", "patch").Groups(federationv1beta1.SchemeGroupVersion.Group).Resources("clusters", "clusters/status").RuleOrDie(),
		rbacv1helpers.NewRule("create", "update", "patch").Groups("", "events.k8s.io").Resources("events").RuleOrDie(),
	)
}

// federationClusterRoleBindings bind the federation's components to their
// roles by the user names of their client certificates. The controller
// manager is also an auth delegator: it asks who calls its /metrics and
// whether they may (TokenReview, SubjectAccessReview).
func federationClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	own := rbacv1helpers.NewClusterBinding(federationv1beta1.ControllerManagerUser).Users(federationv1beta1.ControllerManagerUser).BindingOrDie()
	delegator := rbacv1helpers.NewClusterBinding("system:auth-delegator").Users(federationv1beta1.ControllerManagerUser).BindingOrDie()
	delegator.Name = federationv1beta1.ControllerManagerUser + ":auth-delegator"
	bindings := []rbacv1.ClusterRoleBinding{own, delegator}
	for i := range bindings {
		withBootstrapMetadata(&bindings[i].ObjectMeta)
	}
	return bindings
}

// withBootstrapMetadata labels and annotates an object as Kubernetes does
// its bootstrap policy, so that it is reconciled at every start unless an
// admin turns autoupdate off.
func withBootstrapMetadata(m *metav1.ObjectMeta) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	for k, v := range bootstrappolicy.Label {
		m.Labels[k] = v
	}
	for k, v := range bootstrappolicy.Annotation {
		m.Annotations[k] = v
	}
}
