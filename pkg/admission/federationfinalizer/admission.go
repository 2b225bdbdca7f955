// Package federationfinalizer is a mutating admission plugin that sets the
// federation's finalizer (federation.kubernetes.io/delete-from-underlying-clusters)
// on a federated Namespace as it is created, once a member cluster has
// joined.
//
// Only Namespaces get it: like a cluster's namespaces, a deleted Namespace
// stays Terminating until its copies in the members are handled. Other
// federated objects are deleted at once, their deletion recorded in a
// tombstone for the controller manager (pkg/apiserver/deletion.go).
//
// The propagation controller of Namespaces adds the finalizer itself when it
// is missing, so this plugin only saves each new Namespace that extra write.
// It follows StorageObjectInUseProtection, which sets the PVC protection
// finalizer at admission for the controller that removes it. Like there,
// deleting such a Namespace waits for the federation controller manager;
// disable the plugin (--disable-admission-plugins) to run a federation with
// clusters but without that controller.
package federationfinalizer

import (
	"context"
	"fmt"
	"io"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	informers "github.com/federation-v1/federation/pkg/generated/informers/externalversions"
	listers "github.com/federation-v1/federation/pkg/generated/listers/federation/v1beta1"
)

// PluginName is the name of the plugin in --enable-admission-plugins.
const PluginName = "FederationFinalizer"

// Finalizer is the finalizer the plugin sets.
const Finalizer = federationv1beta1.FinalizerDeleteFromUnderlyingClusters

// Register adds the plugin to plugins. resources are the federated
// resources; skip says which objects are never propagated (the
// federation's own namespace, the members' system namespaces, and what is
// in them): they get no finalizer, since no copy of theirs is ever made.
func Register(plugins *admission.Plugins, resources []schema.GroupResource, skip func(gr schema.GroupResource, namespace, name string) bool) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) {
		return New(resources, skip), nil
	})
}

// WantsFederationInformers is told the informers of the federation's own
// API group by the plugin initializer.
type WantsFederationInformers interface {
	SetFederationInformers(informers.SharedInformerFactory)
	admission.InitializationValidator
}

// PluginInitializer hands the federation informers to the plugins that want them.
type PluginInitializer struct {
	Informers informers.SharedInformerFactory
}

// Initialize implements admission.PluginInitializer.
func (i PluginInitializer) Initialize(p admission.Interface) {
	if w, ok := p.(WantsFederationInformers); ok {
		w.SetFederationInformers(i.Informers)
	}
}

// Plugin sets the finalizer on creation.
type Plugin struct {
	*admission.Handler
	resources sets.Set[schema.GroupResource]
	skip      func(gr schema.GroupResource, namespace, name string) bool
	clusters  listers.ClusterLister
}

var (
	_ admission.MutationInterface = &Plugin{}
	_ WantsFederationInformers    = &Plugin{}
)

// New returns the plugin for the federated resources.
func New(resources []schema.GroupResource, skip func(gr schema.GroupResource, namespace, name string) bool) *Plugin {
	return &Plugin{
		Handler:   admission.NewHandler(admission.Create),
		resources: sets.New(resources...),
		skip:      skip,
	}
}

// SetFederationInformers implements WantsFederationInformers.
func (p *Plugin) SetFederationInformers(f informers.SharedInformerFactory) {
	clusters := f.Federation().V1beta1().Clusters()
	p.clusters = clusters.Lister()
	p.SetReadyFunc(clusters.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.clusters == nil {
		return fmt.Errorf("%s: missing the federation informers", PluginName)
	}
	return nil
}

// Admit adds the finalizer to a new federated object while a cluster is
// joined. Without a cluster nothing is propagated, and the federation
// behaves as a plain apiserver: deletions do not wait for anybody.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetSubresource() != "" || a.GetObject() == nil || !p.federated(a.GetResource().GroupResource()) {
		return nil
	}
	if p.skip != nil && p.skip(a.GetResource().GroupResource(), a.GetNamespace(), a.GetName()) {
		return nil
	}
	obj, err := meta.Accessor(a.GetObject())
	if err != nil || slices.Contains(obj.GetFinalizers(), Finalizer) {
		return nil
	}
	if !p.WaitForReady() {
		return admission.NewForbidden(a, fmt.Errorf("%s: not yet ready to handle request", PluginName))
	}
	clusters, err := p.clusters.List(labels.Everything())
	if err != nil || len(clusters) == 0 {
		return nil
	}
	obj.SetFinalizers(append(obj.GetFinalizers(), Finalizer))
	return nil
}

// federated reports whether objects of gr get the finalizer: federated
// Namespaces only.
func (p *Plugin) federated(gr schema.GroupResource) bool {
	return gr == namespaces && p.resources.Has(gr)
}

// namespaces is the one resource whose objects get the finalizer.
var namespaces = schema.GroupResource{Resource: "namespaces"}
