// Package storage is the REST storage of federated Services: Kubernetes'
// own Service strategy (defaulting, validation, status handling) on a plain
// generic store. A federated Service allocates no cluster IP or node port of
// its own (each member cluster does), so none of kube-apiserver's allocators
// are involved.
package storage

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"
	printerstorage "k8s.io/kubernetes/pkg/printers/storage"
	svcreg "k8s.io/kubernetes/pkg/registry/core/service"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// REST serves services.
type REST struct {
	*genericregistry.Store
}

var (
	_ rest.ShortNamesProvider  = &REST{}
	_ rest.CategoriesProvider  = &REST{}
	_ rest.ResetFieldsStrategy = &REST{}
)

// NewREST returns the storage of services and of their status subresource.
func NewREST(optsGetter generic.RESTOptionsGetter) (*REST, *StatusREST, error) {
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &api.Service{} },
		NewListFunc:               func() runtime.Object { return &api.ServiceList{} },
		PredicateFunc:             svcreg.Matcher,
		DefaultQualifiedResource:  api.Resource("services"),
		SingularQualifiedResource: api.Resource("service"),
		ReturnDeletedObject:       true,

		CreateStrategy:      svcreg.Strategy,
		UpdateStrategy:      svcreg.Strategy,
		DeleteStrategy:      svcreg.Strategy,
		ResetFieldsStrategy: svcreg.Strategy,

		BeginCreate: func(_ context.Context, obj runtime.Object, _ *metav1.CreateOptions) (genericregistry.FinishFunc, error) {
			syncClusterIPs(obj.(*api.Service))
			return func(context.Context, bool) {}, nil
		},
		BeginUpdate: func(_ context.Context, obj, _ runtime.Object, _ *metav1.UpdateOptions) (genericregistry.FinishFunc, error) {
			syncClusterIPs(obj.(*api.Service))
			return func(context.Context, bool) {}, nil
		},

		TableConvertor: printerstorage.TableConvertor{TableGenerator: printers.NewTableGenerator().With(printersinternal.AddHandlers)},
	}
	options := &generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: svcreg.GetAttrs}
	if err := store.CompleteWithOptions(options); err != nil {
		return nil, nil, fmt.Errorf("completing the service store: %w", err)
	}
	statusStore := *store
	statusStore.UpdateStrategy = svcreg.StatusStrategy
	statusStore.ResetFieldsStrategy = svcreg.StatusStrategy
	return &REST{store}, &StatusREST{store: &statusStore}, nil
}

// syncClusterIPs fills spec.clusterIPs from spec.clusterIP when only the
// latter is given (for example "None" for a headless Service), as
// kube-apiserver does before validation.
func syncClusterIPs(svc *api.Service) {
	if svc.Spec.ClusterIP != "" && len(svc.Spec.ClusterIPs) == 0 {
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	}
}

// ShortNames implements rest.ShortNamesProvider.
func (r *REST) ShortNames() []string { return []string{"svc"} }

// Categories implements rest.CategoriesProvider.
func (r *REST) Categories() []string { return []string{"all"} }

// StatusREST serves the status subresource of services.
type StatusREST struct {
	store *genericregistry.Store
}

// New returns an empty Service.
func (r *StatusREST) New() runtime.Object { return &api.Service{} }

// Destroy cleans up resources on shutdown.
func (r *StatusREST) Destroy() {
	// The main store owns the underlying storage and destroys it.
}

// Get retrieves a Service, so that status can be patched.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update changes only the status of a Service.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	// Subresources never create the object.
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable prints a Service as a table.
func (r *StatusREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}
