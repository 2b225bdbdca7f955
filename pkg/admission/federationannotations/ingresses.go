package federationannotations

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/serviceingresses"
)

var services = schema.GroupResource{Resource: "services"}

// authorizeIngresses refuses a Service whose service-ingresses annotation
// is set or changed by a user who may not update the virtual subresource
// services/federation-ingresses. The DNS records of the Service are made
// from the annotation, so whoever writes it chooses the addresses its
// names answer: only the controller manager is granted that. Removing the
// annotation needs no right (the controller writes it again), so that
// replacing one's own Service with its manifest keeps working.
func (p *Plugin) authorizeIngresses(ctx context.Context, a admission.Attributes) error {
	if a.GetResource().GroupResource() != services || (a.GetSubresource() != "" && a.GetSubresource() != "status") {
		return nil
	}
	value, set := ingresses(a.GetObject())
	if !set {
		return nil
	}
	if old, had := ingresses(a.GetOldObject()); had && old == value {
		return nil
	}
	return p.authorizeSubresource(ctx, a, serviceingresses.Subresource,
		fmt.Sprintf("the annotation %s is written by the federation controller manager alone", federationv1beta1.ServiceIngressesAnnotation))
}

// ingresses returns the service-ingresses annotation of obj, if any.
func ingresses(obj runtime.Object) (string, bool) {
	if obj == nil {
		return "", false
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	value, ok := m.GetAnnotations()[federationv1beta1.ServiceIngressesAnnotation]
	return value, ok
}
