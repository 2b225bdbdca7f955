// Package federationquota runs Kubernetes' resource quota controller
// (k8s.io/kubernetes/pkg/controller/resourcequota) at the federation, for
// the object counts of the federated types only (package federationquota
// of pkg): it sets a quota's status.hard and status.used of those counts
// when the quota is new or its limits change, again after each deletion of
// a counted object, and at every resync. The ResourceQuota admission
// plugin of the federation apiserver charges creates to status.used and
// refuses those beyond status.hard. The members' sums of every other
// resource in the same status are the propagation controller's; each
// leaves the other's alone (federatedtypes.QuotaCounted).
package federationquota

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/resourcequota"

	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/quotaevaluators"
)

// Name is the controller's name in --controllers.
const Name = "resourcequota-usage"

// Informers hand out the informers of the counted resources (the
// controller manager's dynamic informers, which the propagation
// controllers share) and start them.
type Informers interface {
	ForResource(schema.GroupVersionResource) informers.GenericInformer
	Start(stopCh <-chan struct{})
}

// Controller keeps the federation's object counts in its quotas' status.
type Controller struct {
	quotas  *resourcequota.Controller
	started chan struct{}
	workers int
}

// New makes the controller: quotas are read from quotaInformer and written
// with client, the counted objects read from objects; every quota is
// recounted every resync.
func New(ctx context.Context, client corev1client.ResourceQuotasGetter, quotaInformer coreinformers.ResourceQuotaInformer,
	objects Informers, resync time.Duration, workers int) (*Controller, error) {
	factory := informerFactory{objects: objects, quotas: quotaInformer}
	listers := generic.ListerFuncForResourceFunc(factory.ForResource)
	started := make(chan struct{})
	quotas, err := resourcequota.NewController(ctx, &resourcequota.ControllerOptions{
		QuotaClient:           client,
		ResourceQuotaInformer: quotaInformer,
		ResyncPeriod:          controller.StaticResyncPeriodFunc(resync),
		Registry:              generic.NewRegistry(quotaevaluators.Evaluators(listers)),
		// The counted resources, not the server's discovery: what is
		// not counted here is the members' (federatedtypes.QuotaCounted).
		DiscoveryFunc:             counted,
		IgnoredResourcesFunc:      func() map[schema.GroupResource]struct{} { return nil },
		InformersStarted:          started,
		InformerFactory:           factory,
		ReplenishmentResyncPeriod: controller.StaticResyncPeriodFunc(0),
		UpdateFilter:              usageChanged,
	})
	if err != nil {
		return nil, err
	}
	return &Controller{quotas: quotas, started: started, workers: workers}, nil
}

// Run runs the controller until ctx ends; the informers are started by
// then.
func (c *Controller) Run(ctx context.Context) error {
	close(c.started)
	c.quotas.Run(ctx, c.workers)
	return nil
}

// counted lists the counted resources as discovery would, with the verbs
// the quota controller asks of a resource it monitors.
func counted() ([]*metav1.APIResourceList, error) {
	byGV := map[schema.GroupVersion]*metav1.APIResourceList{}
	var out []*metav1.APIResourceList
	for _, t := range federatedtypes.All {
		if !t.Namespaced {
			continue
		}
		gv := t.Resource.GroupVersion()
		list, ok := byGV[gv]
		if !ok {
			list = &metav1.APIResourceList{GroupVersion: gv.String()}
			byGV[gv] = list
			out = append(out, list)
		}
		list.APIResources = append(list.APIResources, metav1.APIResource{Name: t.Resource.Resource, Namespaced: true, Kind: t.Kind,
			Verbs: metav1.Verbs{"create", "delete", "get", "list", "watch"}})
	}
	return out, nil
}

// services' usage changes with their type and ports, which an update can
// change; the other resources only count objects.
var servicesEvaluator = func() quota.Evaluator {
	for _, e := range quotaevaluators.Evaluators(nil) {
		if e.GroupResource() == (schema.GroupResource{Resource: "services"}) {
			return e
		}
	}
	return nil
}()

// usageChanged tells the quota controller to recount after an update that
// changes what the object counts for (a Service's type or ports).
func usageChanged(resource schema.GroupVersionResource, oldObj, newObj any) bool {
	if resource.GroupResource() != servicesEvaluator.GroupResource() {
		return false
	}
	before, err1 := servicesEvaluator.Usage(asObject(oldObj))
	after, err2 := servicesEvaluator.Usage(asObject(newObj))
	return err1 != nil || err2 != nil || !quota.Equals(before, after)
}

// informerFactory is Informers as the quota controller takes them.
type informerFactory struct {
	objects Informers
	quotas  coreinformers.ResourceQuotaInformer
}

// resourceQuotas are counted from the informer that tells the controller of
// a new quota, as in kube-controller-manager: counted from another one,
// which may not have seen it yet, a new quota's status.used left itself out
// until the next resync (up to 5 minutes).
var resourceQuotas = corev1.Resource("resourcequotas")

func (f informerFactory) ForResource(gvr schema.GroupVersionResource) (informers.GenericInformer, error) {
	if gvr.GroupResource() == resourceQuotas {
		return quotaInformer{f.quotas}, nil
	}
	return f.objects.ForResource(gvr), nil
}

// quotaInformer is the typed quota informer as a generic one. The
// controller manager starts it with its other typed informers.
type quotaInformer struct {
	coreinformers.ResourceQuotaInformer
}

func (q quotaInformer) Lister() cache.GenericLister {
	return cache.NewGenericLister(q.Informer().GetIndexer(), resourceQuotas)
}

func (f informerFactory) Start(stopCh <-chan struct{}) {
	f.objects.Start(stopCh)
}

// asObject is an informer's object as the evaluators take it.
func asObject(obj any) runtime.Object {
	o, _ := obj.(runtime.Object)
	return o
}
