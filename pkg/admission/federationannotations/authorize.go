package federationannotations

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

var namespaces = schema.GroupResource{Resource: "namespaces"}

// authorizeSubresource refuses the request (403) unless its user may
// update the virtual subresource subresource of the object: an RBAC right
// that no built-in tenant role grants, which the annotations that give
// power beyond the object itself are kept behind. what says which power;
// the message goes on with who lacks which right. A Namespace's right is
// cluster-wide, so a namespace's own admin cannot grant it there.
func (p *Plugin) authorizeSubresource(ctx context.Context, a admission.Attributes, subresource, what string) error {
	gr := a.GetResource().GroupResource()
	resource := gr.String() + "/" + subresource // as kubectl create role --resource takes it
	if p.authorizer == nil {
		return admission.NewForbidden(a, fmt.Errorf("%s: no authorizer to check the right to update %s", PluginName, resource))
	}
	ns := a.GetNamespace()
	if gr == namespaces {
		ns = "" // a Namespace's requests carry its name as their namespace
	}
	attrs := authorizer.AttributesRecord{
		User: a.GetUserInfo(), Verb: "update", Namespace: ns, Name: a.GetName(),
		APIGroup: gr.Group, APIVersion: a.GetResource().Version, Resource: gr.Resource, Subresource: subresource,
		ResourceRequest: true,
	}
	decision, reason, err := p.authorizer.Authorize(ctx, attrs)
	if decision == authorizer.DecisionAllow {
		return nil
	}
	why := ""
	switch {
	case err != nil:
		why = ": " + err.Error()
	case reason != "":
		why = ": " + reason
	}
	user := "anonymous"
	if u := a.GetUserInfo(); u != nil {
		user = u.GetName()
	}
	return admission.NewForbidden(a, fmt.Errorf("%s: user %q may not update %s%s", what, user, resource, why))
}
