// Package storage is the REST storage of the Cluster resource.
package storage

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/federation-v1/federation/pkg/apis/federation"
	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/registry/federation/cluster"
)

// REST serves clusters.
type REST struct {
	*genericregistry.Store
}

// NewREST returns the storage of clusters and of their status subresource.
func NewREST(optsGetter generic.RESTOptionsGetter) (*REST, *StatusREST, error) {
	strategy := cluster.NewStrategy(legacyscheme.Scheme)
	statusStrategy := cluster.NewStatusStrategy(strategy)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &federationv1beta1.Cluster{} },
		NewListFunc:               func() runtime.Object { return &federationv1beta1.ClusterList{} },
		PredicateFunc:             cluster.Matcher,
		DefaultQualifiedResource:  federation.Resource("clusters"),
		SingularQualifiedResource: federation.Resource("cluster"),

		CreateStrategy:      strategy,
		UpdateStrategy:      strategy,
		DeleteStrategy:      strategy,
		ResetFieldsStrategy: strategy,

		TableConvertor: cluster.TableConvertor{},
	}
	options := &generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: cluster.GetAttrs}
	if err := store.CompleteWithOptions(options); err != nil {
		return nil, nil, fmt.Errorf("completing the cluster store: %w", err)
	}
	statusStore := *store
	statusStore.UpdateStrategy = statusStrategy
	statusStore.ResetFieldsStrategy = statusStrategy
	return &REST{store}, &StatusREST{store: &statusStore}, nil
}

// StatusREST serves the status subresource of clusters.
type StatusREST struct {
	store *genericregistry.Store
}

// New returns an empty Cluster.
func (r *StatusREST) New() runtime.Object { return &federationv1beta1.Cluster{} }

// Destroy cleans up resources on shutdown.
func (r *StatusREST) Destroy() {
	// The main store owns the underlying storage and destroys it.
}

// Get retrieves a Cluster, so that its status can be patched.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update changes only the status of a Cluster.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable prints a Cluster as a table.
func (r *StatusREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}
