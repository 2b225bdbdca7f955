// Package federationrbac is a validating admission plugin that refuses, at
// the federation, the Roles and RoleBindings a member would refuse to hold
// (package memberrbac), so that their author learns it as they create them,
// with a 422 naming the field, not from a member's event: a Role granting
// "*", escalate, bind or impersonate, and a RoleBinding to a ClusterRole
// other than admin, edit or view. It also refuses the subjects that would
// name, in each member, that cluster's own identities rather than the
// federation's (subjects.go). Roles and RoleBindings that are never
// propagated (in the never-propagated namespaces, or labelled local) are
// the federation's own authorization and are left alone.
package federationrbac

import (
	"context"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/kubernetes/pkg/apis/rbac"

	"github.com/federation-v1/federation/pkg/admission/internal/federated"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/memberrbac"
)

// PluginName is the name of the plugin in --enable-admission-plugins.
const PluginName = "FederationRBAC"

// Register adds the plugin to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) {
		return New(), nil
	})
}

// New returns the plugin.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}
}

// Plugin validates propagated Roles and RoleBindings on create and update.
type Plugin struct {
	*admission.Handler
	// Lookup finds the namespaces of service account subjects.
	federated.Lookup
}

var (
	_ admission.ValidationInterface                = &Plugin{}
	_ admission.InitializationValidator            = &Plugin{}
	_ initializer.WantsExternalKubeInformerFactory = &Plugin{}
	_ initializer.WantsExternalKubeClientSet       = &Plugin{}
)

var (
	roles        = schema.GroupResource{Group: rbac.GroupName, Resource: "roles"}
	roleBindings = schema.GroupResource{Group: rbac.GroupName, Resource: "rolebindings"}
)

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if err := p.Lookup.ValidateInitialization(); err != nil {
		return fmt.Errorf("%s: %w", PluginName, err)
	}
	return nil
}

// Validate refuses a propagated Role or RoleBinding a member would refuse.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	gr := a.GetResource().GroupResource()
	if a.GetSubresource() != "" || (gr != roles && gr != roleBindings) || federatedtypes.NeverPropagated(gr, a.GetNamespace(), a.GetName()) {
		return nil
	}
	var errs field.ErrorList
	switch o := a.GetObject().(type) {
	case *rbac.Role:
		if federatedtypes.Local(o) {
			return nil
		}
		verbs := make([][]string, len(o.Rules))
		for i, r := range o.Rules {
			verbs[i] = r.Verbs
		}
		errs = memberrbac.ValidateRole(verbs)
	case *rbac.RoleBinding:
		if federatedtypes.Local(o) {
			return nil
		}
		errs = memberrbac.ValidateRoleBinding(o.RoleRef.Kind, o.RoleRef.Name, memberrbac.DefaultBindableClusterRoles)
		old, _ := a.GetOldObject().(*rbac.RoleBinding)
		subjectErrs, err := p.validateSubjects(ctx, o, old)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		errs = append(errs, subjectErrs...)
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(a.GetKind().GroupKind(), a.GetName(), errs)
}
