package kubefed

import (
	"fmt"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/federation-v1/federation/pkg/memberrbac"
)

// rbacValidations bound the federation's RBAC writes in a member (see
// package memberrbac): the created-by mark of a namespace is set only as
// the federation creates it, the adopted-by mark only to its own name;
// Roles and RoleBindings are written only in namespaces it created;
// Roles grant none of memberrbac.RefusedVerbs; RoleBindings refer to Roles
// (of their namespace), to the bindable ClusterRoles, or are the
// federation's own binding there, and name no system: user or group nor a
// service account of the protected namespaces; ClusterRoles and
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
	refused := refusedBy(fed, accessName(fed))
	// Its own binding in a namespace: its namespace role, to its account.
	ownAccess := "(object.roleRef.kind == 'ClusterRole' && object.roleRef.name == " + access + " && object.metadata.name == " + access +
		" && has(object.subjects) && object.subjects.size() == 1 && object.subjects[0].kind == 'ServiceAccount' && " +
		"object.subjects[0].name == " + strconv.Quote(account.Name) + " && 'namespace' in object.subjects[0] && object.subjects[0]['namespace'] == " + strconv.Quote(account.Namespace) + ")"
	return []admissionregistrationv1.Validation{
		{
			Expression: "!" + namespaceWrite + " || !" + labelled("object") +
				" || (request.operation == 'CREATE' ? object.metadata.labels[" + mark + "] == " + name +
				" : " + labelled("oldObject") + " && oldObject.metadata.labels[" + mark + "] == object.metadata.labels[" + mark + "])",
			Message: refused("mark a namespace " + memberrbac.CreatedByLabel + " other than as it creates it"),
		},
		adoptedValidation(fed, refused),
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
				"object.roleRef.name in " + celList(bindable) + " || " + ownAccess,
			Message: refused(fmt.Sprintf("bind a ClusterRole other than %v", bindable)),
		},
		{
			// Anonymous or every authenticated user, every service account,
			// the nodes: a tenant's binding must not reach them.
			Expression: "!" + rbacResource("rolebindings") + " || object == null || !has(object.subjects) || " +
				"object.subjects.all(s, !(s.kind in ['Group', 'User'] && s.name.startsWith('system:')))",
			Message: refused("write a RoleBinding naming a system: user or group (system:unauthenticated, system:authenticated, system:serviceaccounts, ...)"),
		},
		{
			Expression: "!" + rbacResource("rolebindings") + " || object == null || !has(object.subjects) || " + ownAccess + " || " +
				"object.subjects.all(s, !(s.kind == 'ServiceAccount' && 'namespace' in s && s['namespace'] in variables.protected))",
			Message: refused("write a RoleBinding naming a service account of " + strings.Join(protectedNamespaces, ", ")),
		},
		{
			Expression: "!" + rbacResource("clusterroles", "clusterrolebindings"),
			Message:    refused("write ClusterRoles or ClusterRoleBindings"),
		},
	}
}

// namespaceWrite is whether a request writes a Namespace itself (not a
// subresource).
const namespaceWrite = "(request.resource.group == '' && request.resource.resource == 'namespaces' && (!has(request.subResource) || request.subResource == ''))"

// adoptedValidation bounds the adopted marks of a namespace
// (memberrbac.AdoptedByLabel, one per federation): the federation may put
// on only its own, "true" (adopting is an admin's choice, checked before it
// asks), and take off only its own; other federations' it leaves as they
// are. Deleting a Namespace is not marking it.
func adoptedValidation(fed string, refused func(string) string) admissionregistrationv1.Validation {
	prefix := strconv.Quote(memberrbac.AdoptedByPrefix)
	own := strconv.Quote(memberrbac.AdoptedByLabel(fed))
	labels := func(obj string) string {
		return fmt.Sprintf("(%s != null && has(%s.metadata.labels) ? %s.metadata.labels : {})", obj, obj, obj)
	}
	// Every mark the object has is its own "true" or one the old object
	// had with the same value; every mark the old object had but its own
	// is still there.
	kept := fmt.Sprintf("%s.all(k, !k.startsWith(%s) || (k == %s ? %s[k] == %s : k in %s && %s[k] == %s[k]))",
		labels("object"), prefix, own, labels("object"), strconv.Quote(memberrbac.Adopted), labels("oldObject"), labels("oldObject"), labels("object"))
	notRemoved := fmt.Sprintf("%s.all(k, !k.startsWith(%s) || k == %s || k in %s)", labels("oldObject"), prefix, own, labels("object"))
	return admissionregistrationv1.Validation{
		Expression: "!" + namespaceWrite + " || object == null || (" + kept + " && " + notRemoved + ")",
		Message: refused("mark a namespace " + memberrbac.AdoptedByPrefix + "NAME other than its own (" + memberrbac.AdoptedByLabel(fed) +
			"=" + memberrbac.Adopted + "), nor change or remove another federation's mark"),
	}
}
