// Package federationannotations is a validating admission plugin that
// rejects federated objects whose federation annotations do not parse:
// the cluster selector on any object, and the replica preferences on
// ReplicaSets, Deployments, StatefulSets and Jobs. v1 silently ignored such annotations;
// here the request fails with a 422 naming the annotation (and the field of
// the preferences). The overrides annotation is checked rule by rule and
// dry-applied to the object (overrides.go). It also keeps the
// service-ingresses annotation, which DNS records are made from, to the
// federation controller manager: setting
// or changing it takes the right to update services/federation-ingresses,
// else the request fails with a 403 (ingresses.go). Likewise, asking for
// adoption (conflict-resolution: adopt, delete-adopted-copies: "true")
// takes the right to update <resource>/federation-adoption (adoption.go).
package federationannotations

import (
	"context"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/clusterselector"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/replicapreferences"
)

// PluginName is the name of the plugin in --enable-admission-plugins.
const PluginName = "FederationAnnotations"

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

// Plugin validates the federation annotations on create and update.
type Plugin struct {
	*admission.Handler
	// authorizer says who may write the service-ingresses and adoption
	// annotations.
	authorizer authorizer.Authorizer
}

var (
	_ admission.ValidationInterface = &Plugin{}
	_ initializer.WantsAuthorizer   = &Plugin{}
)

// SetAuthorizer implements initializer.WantsAuthorizer.
func (p *Plugin) SetAuthorizer(a authorizer.Authorizer) {
	p.authorizer = a
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.authorizer == nil {
		return fmt.Errorf("%s: missing the authorizer", PluginName)
	}
	return nil
}

// Validate rejects a Service whose service-ingresses annotation the user
// may not write, an object whose adoption annotations they may not turn
// on, and an object whose federation annotations do not parse.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetObject() == nil {
		return nil
	}
	if err := p.authorizeIngresses(ctx, a); err != nil {
		return err
	}
	if err := p.authorizeAdoption(ctx, a); err != nil {
		return err
	}
	if a.GetSubresource() != "" {
		return nil
	}
	obj, err := meta.Accessor(a.GetObject())
	if err != nil {
		// Not an object with metadata (for example a Scale): nothing to check.
		return nil
	}
	errs := Validate(a.GetResource().GroupResource(), obj.GetAnnotations())
	var oldAnnotations map[string]string
	if old := a.GetOldObject(); old != nil {
		if m, err := meta.Accessor(old); err == nil {
			oldAnnotations = m.GetAnnotations()
		}
	}
	errs = append(errs, validateOverrides(a.GetResource().GroupResource(), a.GetObject(), a.GetOldObject(), obj.GetAnnotations(), oldAnnotations)...)
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(a.GetKind().GroupKind(), a.GetName(), errs)
}

// Validate checks the federation annotations of an object of resource gr.
func Validate(gr schema.GroupResource, annotations map[string]string) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("metadata", "annotations")
	if value, ok := annotations[clusterselector.Annotation]; ok {
		if _, err := clusterselector.Parse(value); err != nil {
			errs = append(errs, field.Invalid(path.Key(clusterselector.Annotation), value, err.Error()))
		}
	}
	if value, ok := annotations[federationv1beta1.ConflictResolutionAnnotation]; ok &&
		value != federationv1beta1.ConflictResolutionAbort && value != federationv1beta1.ConflictResolutionAdopt {
		errs = append(errs, field.NotSupported(path.Key(federationv1beta1.ConflictResolutionAnnotation), value,
			[]string{federationv1beta1.ConflictResolutionAbort, federationv1beta1.ConflictResolutionAdopt}))
	}
	if value, ok := annotations[federationv1beta1.DeleteAdoptedAnnotation]; ok && value != "true" && value != "false" {
		errs = append(errs, field.NotSupported(path.Key(federationv1beta1.DeleteAdoptedAnnotation), value, []string{"true", "false"}))
	}
	if t := federatedtypes.ServedAs(gr); t != nil && t.Replicas != nil {
		key := t.Replicas.Annotation
		if value, ok := annotations[key]; ok {
			_, prefErrs := replicapreferences.ParseField(value, path.Key(key))
			errs = append(errs, prefErrs...)
		}
	}
	return errs
}
