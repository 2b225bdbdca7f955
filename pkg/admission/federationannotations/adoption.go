package federationannotations

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"

	"github.com/federation-v1/federation/pkg/admission/internal/federated"
	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// adoptionAnnotations are the annotations, at their value, that act on
// member objects the federation did not create, and what they do there.
var adoptionAnnotations = []struct{ key, value, does string }{
	{federationv1beta1.ConflictResolutionAnnotation, federationv1beta1.ConflictResolutionAdopt,
		"takes over member objects of its name that the federation did not create"},
	{federationv1beta1.DeleteAdoptedAnnotation, "true",
		"makes deleting the object delete the member objects it took over"},
}

// authorizeAdoption refuses an object on which the adoption annotations
// are turned on by a user who may not update the virtual subresource
// <resource>/federation-adoption: without it, anyone who may write a
// ConfigMap in a namespace could overwrite (and delete) another team's
// ConfigMap of that name in every member. Only turning one on needs it:
// keeping it (as the controller manager does when it writes the object),
// removing or lowering it need nothing. An object that is not propagated
// (local, or in a never-propagated namespace) adopts nothing, so the
// annotations count as off there: the right is asked for when it becomes
// propagated with them on, and the controller manager may copy them to the
// local ReplicaSets of a Deployment's history.
func (p *Plugin) authorizeAdoption(ctx context.Context, a admission.Attributes) error {
	if a.GetSubresource() != "" && a.GetSubresource() != "status" {
		return nil
	}
	var asked []string
	for _, an := range adoptionAnnotations {
		if adoptionOn(a, a.GetObject(), an.key, an.value) && !adoptionOn(a, a.GetOldObject(), an.key, an.value) {
			asked = append(asked, fmt.Sprintf("the annotation %s: %q %s", an.key, an.value, an.does))
		}
	}
	if len(asked) == 0 {
		return nil
	}
	return p.authorizeSubresource(ctx, a, federationv1beta1.AdoptionSubresource, strings.Join(asked, ", and "))
}

// adoptionOn reports whether obj, propagated, carries key at value.
func adoptionOn(a admission.Attributes, obj runtime.Object, key, value string) bool {
	if obj == nil {
		return false
	}
	m, err := meta.Accessor(obj)
	if err != nil || m.GetAnnotations()[key] != value {
		return false
	}
	return federated.Propagated(a.GetResource().GroupResource(), a.GetNamespace(), m)
}
