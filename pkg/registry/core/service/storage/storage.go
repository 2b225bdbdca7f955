// Package storage is the REST storage of federated Services: Kubernetes'
// own Service strategy (defaulting, validation, status handling) on a plain
// generic store, and Kubernetes' cluster IP allocator for the federation's
// virtual cluster IPs (clusterip.go). A federated Service allocates no node
// port (each member cluster does), and its cluster IP is the federation's
// alone: each member allocates its own.
package storage

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/util/dryrun"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"
	printerstorage "k8s.io/kubernetes/pkg/printers/storage"
	svcreg "k8s.io/kubernetes/pkg/registry/core/service"
	"k8s.io/kubernetes/pkg/registry/core/service/ipallocator"
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
// Services get their cluster IP from ips; with nil ips they get none.
func NewREST(optsGetter generic.RESTOptionsGetter, ips ipallocator.Interface) (*REST, *StatusREST, error) {
	begin := beginHooks{}
	if ips != nil {
		begin.ips = &clusterIPs{alloc: ips}
	}
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

		BeginCreate: begin.create,
		BeginUpdate: begin.update,
		AfterDelete: begin.afterDelete,

		TableConvertor: printerstorage.TableConvertor{TableGenerator: printers.NewTableGenerator().With(printersinternal.AddHandlers)},
	}
	options := &generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: svcreg.GetAttrs}
	if err := store.CompleteWithOptions(options); err != nil {
		return nil, nil, fmt.Errorf("completing the service store: %w", err)
	}
	statusStore := *store
	statusStore.UpdateStrategy = svcreg.StatusStrategy
	statusStore.ResetFieldsStrategy = svcreg.StatusStrategy
	// Status writes keep the spec as it is: nothing to allocate.
	statusStore.BeginUpdate = nil
	return &REST{store}, &StatusREST{store: &statusStore}, nil
}

// beginHooks prepare a Service's write: spec.clusterIPs in step with
// spec.clusterIP, and with ips, its cluster IP allocated.
type beginHooks struct {
	ips *clusterIPs
}

func (b beginHooks) create(ctx context.Context, obj runtime.Object, options *metav1.CreateOptions) (genericregistry.FinishFunc, error) {
	svc := obj.(*api.Service)
	syncClusterIPs(svc)
	if b.ips == nil {
		return noop, nil
	}
	return b.ips.beginCreate(ctx, svc, dryrun.IsDryRun(options.DryRun))
}

func (b beginHooks) update(ctx context.Context, obj, old runtime.Object, options *metav1.UpdateOptions) (genericregistry.FinishFunc, error) {
	svc := obj.(*api.Service)
	syncClusterIPs(svc)
	if b.ips == nil {
		return noop, nil
	}
	return b.ips.beginUpdate(ctx, svc, old.(*api.Service), dryrun.IsDryRun(options.DryRun))
}

func (b beginHooks) afterDelete(obj runtime.Object, options *metav1.DeleteOptions) {
	if b.ips != nil {
		b.ips.afterDelete(obj, options)
	}
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
