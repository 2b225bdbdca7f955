// Package cluster holds the strategies of the Cluster resource: create
// clears status, update keeps status, a status update keeps spec, and both
// validate the spec.
package cluster

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/apis/federation/validation"
)

// strategy implements create, update and delete behaviour for Clusters.
type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

// NewStrategy returns the strategy for Clusters, typed by typer.
func NewStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{typer, names.SimpleNameGenerator}
}

// NamespaceScoped is false: Clusters are cluster-scoped.
func (strategy) NamespaceScoped() bool { return false }

// GetResetFields says which fields the main resource does not change.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		"federation/v1beta1": fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
}

// PrepareForCreate clears the status: only the cluster controller sets it.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	cluster := obj.(*federationv1beta1.Cluster)
	cluster.Status = federationv1beta1.ClusterStatus{}
	cluster.Generation = 1
}

// PrepareForUpdate keeps the stored status and bumps the generation when
// the spec changes.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	cluster, oldCluster := obj.(*federationv1beta1.Cluster), old.(*federationv1beta1.Cluster)
	cluster.Status = oldCluster.Status
	if !equality.Semantic.DeepEqual(cluster.Spec, oldCluster.Spec) {
		cluster.Generation = oldCluster.Generation + 1
	}
}

// Validate validates a new Cluster.
func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateCluster(obj.(*federationv1beta1.Cluster))
}

// WarningsOnCreate returns no warnings.
func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

// Canonicalize does nothing.
func (strategy) Canonicalize(runtime.Object) {}

// AllowCreateOnUpdate is false: a Cluster is created with POST (or apply).
func (strategy) AllowCreateOnUpdate() bool { return false }

// AllowUnconditionalUpdate allows updates without a resourceVersion.
func (strategy) AllowUnconditionalUpdate() bool { return true }

// ValidateUpdate validates the updated Cluster, spec included.
func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateClusterUpdate(obj.(*federationv1beta1.Cluster), old.(*federationv1beta1.Cluster))
}

// WarningsOnUpdate returns no warnings.
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// statusStrategy implements updates of the status subresource.
type statusStrategy struct {
	strategy
}

// NewStatusStrategy returns the strategy of the status subresource.
func NewStatusStrategy(s strategy) statusStrategy { return statusStrategy{s} }

// GetResetFields says that a status update never changes the spec.
func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		"federation/v1beta1": fieldpath.NewSet(fieldpath.MakePathOrDie("spec")),
	}
}

// PrepareForUpdate keeps the stored spec and metadata other than labels
// and annotations handled by the generic store.
func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	cluster, oldCluster := obj.(*federationv1beta1.Cluster), old.(*federationv1beta1.Cluster)
	cluster.Spec = oldCluster.Spec
}

// ValidateUpdate validates the new status.
func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateClusterStatusUpdate(obj.(*federationv1beta1.Cluster), old.(*federationv1beta1.Cluster))
}

// GetAttrs returns the labels and fields of a Cluster for list filtering.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	cluster, ok := obj.(*federationv1beta1.Cluster)
	if !ok {
		return nil, nil, fmt.Errorf("object of type %T is not a Cluster", obj)
	}
	return cluster.Labels, generic.ObjectMetaFieldsSet(&cluster.ObjectMeta, false), nil
}

// Matcher returns the predicate that selects Clusters by label and field.
func Matcher(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: GetAttrs}
}
