package kubefed

import (
	"fmt"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/federation-v1/federation/pkg/memberrbac"
)

// rbacValidations bound the federation's RBAC writes in a member (see
// package memberrbac): the created-by mark of a namespace is set only as
// the federation creates it; Roles and RoleBindings are written only in
// namespaces so marked; Roles grant none of memberrbac.RefusedVerbs;
// RoleBindings refer to Roles (of their namespace), to the bindable
// ClusterRoles, or are the federation's own binding there; ClusterRoles and
// ClusterRoleBindings are never written. Whether a RoleBinding's Role is
// one the federation propagated cannot be told here (a policy reads only
// the request, its object and its namespace): it is bounded by the
// namespace, which the federation created.
func rbacValidations(fed string, bindable []string) []admissionregistrationv1.Validation {
	mark := strconv.Quote(memberrbac.CreatedByLabel)
	name := strconv.Quote(fed)
	access := strconv.Quote(memberrbac.AccessName(fed))
	account := memberrbac.Account(fed)
	rbacResource := func(resources ...string) string {
		return "(request.resource.group == 'rbac.authorization.k8s.io' && request.resource.resource in " + celList(resources) + ")"
	}
	labelled := func(obj string) string {
		return fmt.Sprintf("(%s != null && has(%s.metadata.labels) && %s in %s.metadata.labels)", obj, obj, mark, obj)
	}
	refused := func(what string) string {
		return fmt.Sprintf("federation %q may not %s in this cluster (policy %s)", fed, what, accessName(fed))
	}
	return []admissionregistrationv1.Validation{
		{
			Expression: "!(request.resource.group == '' && request.resource.resource == 'namespaces' && (!has(request.subResource) || request.subResource == '')) || !" + labelled("object") +
				" || (request.operation == 'CREATE' ? object.metadata.labels[" + mark + "] == " + name +
				" : " + labelled("oldObject") + " && oldObject.metadata.labels[" + mark + "] == object.metadata.labels[" + mark + "])",
			Message: refused("mark a namespace " + memberrbac.CreatedByLabel + " other than as it creates it"),
		},
		{
			Expression: "!" + rbacResource("roles", "rolebindings") + " || (" + labelled("namespaceObject") +
				" && namespaceObject.metadata.labels[" + mark + "] == " + name + ")",
			Message: refused("write Roles or RoleBindings in a namespace it did not create"),
		},
		{
			Expression: "!" + rbacResource("roles") + " || object == null || !has(object.rules) || " +
				"object.rules.all(r, !has(r.verbs) || r.verbs.all(v, !(v in " + celList(memberrbac.RefusedVerbs) + ")))",
			Message: refused("write a Role granting " + fmt.Sprint(memberrbac.RefusedVerbs)),
		},
		{
			// (A subject's namespace is read by index: namespace is a
			// reserved word in CEL.)
			Expression: "!" + rbacResource("rolebindings") + " || object == null || object.roleRef.kind != 'ClusterRole' || " +
				"object.roleRef.name in " + celList(bindable) + " || (object.roleRef.name == " + access + " && object.metadata.name == " + access +
				" && has(object.subjects) && object.subjects.size() == 1 && object.subjects[0].kind == 'ServiceAccount' && " +
				"object.subjects[0].name == " + strconv.Quote(account.Name) + " && 'namespace' in object.subjects[0] && object.subjects[0]['namespace'] == " + strconv.Quote(account.Namespace) + ")",
			Message: refused(fmt.Sprintf("bind a ClusterRole other than %v", bindable)),
		},
		{
			Expression: "!" + rbacResource("clusterroles", "clusterrolebindings"),
			Message:    refused("write ClusterRoles or ClusterRoleBindings"),
		},
	}
}
