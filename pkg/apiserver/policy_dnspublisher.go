package apiserver

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// dnsPublisherRole names the role that lets the controller manager publish
// the federation's DNS settings.
const dnsPublisherRole = federationv1beta1.ControllerManagerUser + ":dns-publisher"

// dnsPublisherRoles let the controller manager keep the one ConfigMap
// federationv1beta1.DNSConfigMap in the federation's namespace, by
// server-side apply: a create by apply is authorized with the object's name
// (a plain create is not, so it could not be held to one name), and list
// and watch with a metadata.name field selector are too.
func dnsPublisherRoles() map[string][]rbacv1.Role {
	role := rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: dnsPublisherRole, Namespace: federationv1beta1.SystemNamespace},
		Rules: []rbacv1.PolicyRule{
			rbacv1helpers.NewRule("get", "list", "watch", "create", "patch").Groups("").Resources("configmaps").
				Names(federationv1beta1.DNSConfigMap).RuleOrDie(),
		},
	}
	withBootstrapMetadata(&role.ObjectMeta)
	return map[string][]rbacv1.Role{federationv1beta1.SystemNamespace: {role}}
}

// dnsPublisherRoleBindings bind dnsPublisherRole to the controller manager.
func dnsPublisherRoleBindings() map[string][]rbacv1.RoleBinding {
	binding := rbacv1helpers.NewRoleBinding(dnsPublisherRole, federationv1beta1.SystemNamespace).
		Users(federationv1beta1.ControllerManagerUser).BindingOrDie()
	withBootstrapMetadata(&binding.ObjectMeta)
	return map[string][]rbacv1.RoleBinding{federationv1beta1.SystemNamespace: {binding}}
}
