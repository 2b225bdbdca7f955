// Package membersonly serves, read-only and empty, the core kinds that only
// ever exist in member clusters: Pods, Endpoints, ReplicationControllers and
// PersistentVolumes. kubectl's `apply --prune -l` lists every kind of its
// default prune list and fails on a server that does not know one of them;
// at the federation these kinds answer as a cluster holding none of them
// would: empty lists, not found, watches that never send. Writes are not
// allowed (405). The members' own objects are seen through the members'
// proxy (`kubefed get pods`), as the warning on a plain get or list says.
package membersonly

import (
	"context"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/warning"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"
	printerstorage "k8s.io/kubernetes/pkg/printers/storage"
)

// listResourceVersion is the resource version of every empty list: a watch
// from it (an informer's, kubectl get -w) is served, and never sends.
const listResourceVersion = "1"

// REST is the storage of one kind that lives only in members.
type REST struct {
	resource     schema.GroupResource
	singular     string
	namespaced   bool
	newObj       func() runtime.Object
	newList      func() runtime.Object
	shortNames   []string
	categories   []string
	tableConvert rest.TableConvertor
}

var (
	_ rest.Storage              = &REST{}
	_ rest.Scoper               = &REST{}
	_ rest.Getter               = &REST{}
	_ rest.Lister               = &REST{}
	_ rest.Watcher              = &REST{}
	_ rest.SingularNameProvider = &REST{}
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.CategoriesProvider   = &REST{}
)

// Stores are the four kinds' storages, keyed by resource.
func Stores() map[string]rest.Storage {
	table := printerstorage.TableConvertor{TableGenerator: printers.NewTableGenerator().With(printersinternal.AddHandlers)}
	kinds := []*REST{
		{resource: api.Resource("pods"), singular: "pod", namespaced: true, shortNames: []string{"po"}, categories: []string{"all"},
			newObj: func() runtime.Object { return &api.Pod{} }, newList: func() runtime.Object { return &api.PodList{} }},
		{resource: api.Resource("endpoints"), singular: "endpoints", namespaced: true, shortNames: []string{"ep"},
			newObj: func() runtime.Object { return &api.Endpoints{} }, newList: func() runtime.Object { return &api.EndpointsList{} }},
		{resource: api.Resource("replicationcontrollers"), singular: "replicationcontroller", namespaced: true, shortNames: []string{"rc"}, categories: []string{"all"},
			newObj: func() runtime.Object { return &api.ReplicationController{} }, newList: func() runtime.Object { return &api.ReplicationControllerList{} }},
		{resource: api.Resource("persistentvolumes"), singular: "persistentvolume", shortNames: []string{"pv"},
			newObj: func() runtime.Object { return &api.PersistentVolume{} }, newList: func() runtime.Object { return &api.PersistentVolumeList{} }},
	}
	stores := map[string]rest.Storage{}
	for _, k := range kinds {
		k.tableConvert = table
		stores[k.resource.Resource] = k
	}
	return stores
}

// New implements rest.Storage.
func (r *REST) New() runtime.Object { return r.newObj() }

// Destroy implements rest.Storage: nothing is held.
func (r *REST) Destroy() {}

// NamespaceScoped implements rest.Scoper.
func (r *REST) NamespaceScoped() bool { return r.namespaced }

// GetSingularName implements rest.SingularNameProvider.
func (r *REST) GetSingularName() string { return r.singular }

// ShortNames implements rest.ShortNamesProvider.
func (r *REST) ShortNames() []string { return r.shortNames }

// Categories implements rest.CategoriesProvider. Pods and
// ReplicationControllers stay in "all", as on a cluster, so that
// `kubectl get all` lists the same kinds (none of them here).
func (r *REST) Categories() []string { return r.categories }

// NewList implements rest.Lister.
func (r *REST) NewList() runtime.Object { return r.newList() }

// Get implements rest.Getter: nothing is ever found.
func (r *REST) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	r.warn(ctx)
	return nil, apierrors.NewNotFound(r.resource, name)
}

// List implements rest.Lister: always empty. Only a person's list is
// warned about: not a list by label (kubectl's prune asks one per kind) nor
// an informer's (from resource version 0, as GitOps engines' caches list
// every kind).
func (r *REST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	if options == nil || (options.ResourceVersion == "" && (options.LabelSelector == nil || options.LabelSelector.Empty())) {
		r.warn(ctx)
	}
	list := r.newList()
	if err := meta.SetList(list, nil); err != nil {
		return nil, err
	}
	accessor, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	accessor.SetResourceVersion(listResourceVersion)
	return list, nil
}

// Watch implements rest.Watcher: a watch that never sends, until the
// client or the request's timeout stops it. Its resource version is
// checked as kube-apiserver checks it: not a number is a 400, and one
// beyond the lists' is too large (a reflector lists again).
func (r *REST) Watch(_ context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	if options != nil && options.ResourceVersion != "" {
		rv, err := strconv.ParseUint(options.ResourceVersion, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q: %v", options.ResourceVersion, err))
		}
		if current, _ := strconv.ParseUint(listResourceVersion, 10, 64); rv > current {
			return nil, storage.NewTooLargeResourceVersionError(rv, current, 1)
		}
	}
	// Not watch.NewEmptyWatch: its channel is closed at once, and an
	// informer would list again right away, forever.
	return watch.NewFake(), nil
}

// ConvertToTable implements rest.TableConvertor with Kubernetes' own
// columns for the kind.
func (r *REST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.tableConvert.ConvertToTable(ctx, object, tableOptions)
}

func (r *REST) warn(ctx context.Context) {
	if !r.namespaced {
		warning.AddWarning(ctx, "", fmt.Sprintf("%s live in the member clusters, not at the federation: see them with `kubectl --context=FED/CLUSTER get %s` (kubefed kubeconfig)", r.resource.Resource, r.resource.Resource))
		return
	}
	warning.AddWarning(ctx, "", fmt.Sprintf("%s live in the member clusters, not at the federation: see them with `kubefed get %s`", r.resource.Resource, r.resource.Resource))
}
