// Package servicedns is the service DNS controller: for every federated
// Service of type LoadBalancer it keeps the zone, region and global DNS names
// of spec §6 in the federation's DNS zone, from the service-ingresses
// annotation (which clusters have load-balancer addresses and ready
// endpoints) and the Clusters' health, zones and region. Records of a Service
// that is deleted or stops being a LoadBalancer are removed, and so are
// those that came from a Cluster that left. Services of the never-propagated
// namespaces (federation-system, kube-system, ...) get none: no member holds
// them, so their annotation can only have been written by hand.
package servicedns

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	coreinformers "k8s.io/client-go/informers/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/dnsprovider"
	"github.com/federation-v1/federation/pkg/dnsrecords"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	fedinformers "github.com/federation-v1/federation/pkg/generated/informers/externalversions/federation/v1beta1"
	fedlisters "github.com/federation-v1/federation/pkg/generated/listers/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/queueworker"
	"github.com/federation-v1/federation/pkg/serviceingresses"
)

// Name is the controller's name in --controllers.
const Name = "service-dns"

// Event reasons.
const (
	ReasonRecordsFailed  = "DNSRecordsFailed"
	ReasonRecordsUpdated = "DNSRecordsUpdated"
)

// Options configure the records.
type Options struct {
	// Records are the federation name, zone and TTL of the names.
	Records dnsrecords.Config
	// Workers sync Services in parallel.
	Workers int
	// NeverPropagatedNamespaces are the namespaces whose Services get no
	// records; nil means federatedtypes.DefaultNeverPropagatedNamespaces.
	// The federation's own namespace is always one of them.
	NeverPropagatedNamespaces []string
}

// Controller keeps the DNS records of federated Services.
type Controller struct {
	zone     dnsprovider.Zone
	services corelisters.ServiceLister
	clusters fedlisters.ClusterLister
	synced   []cache.InformerSynced
	// queue holds namespace/name keys of Services.
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder
	opts     Options
	// never are the namespaces whose Services get no records.
	never sets.Set[string]
}

// New wires the controller to its informers and to the zone it writes.
func New(zone dnsprovider.Zone, services coreinformers.ServiceInformer, clusters fedinformers.ClusterInformer,
	recorder record.EventRecorder, opts Options) (*Controller, error) {
	c := &Controller{
		zone:     zone,
		services: services.Lister(),
		clusters: clusters.Lister(),
		synced:   []cache.InformerSynced{services.Informer().HasSynced, clusters.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: Name}),
		recorder: recorder,
		opts:     opts,
	}
	never := opts.NeverPropagatedNamespaces
	if never == nil {
		never = federatedtypes.DefaultNeverPropagatedNamespaces
	}
	c.never = federatedtypes.NeverPropagatedNamespaces(never)
	if _, err := services.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	}); err != nil {
		return nil, err
	}
	// A cluster's health, zones or region change the names of every
	// Service; one that leaves takes its addresses, zones and region along.
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { c.enqueueAll() },
		UpdateFunc: func(old, obj any) {
			c.clusterChanged(old.(*federationv1beta1.Cluster), obj.(*federationv1beta1.Cluster))
		},
		DeleteFunc: func(any) { c.enqueueAll() },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) enqueue(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) enqueueAll() {
	services, err := c.services.List(labels.Everything())
	if err != nil {
		return
	}
	for _, s := range services {
		if s.Spec.Type == corev1.ServiceTypeLoadBalancer {
			c.enqueue(s)
		}
	}
}

// clusterChanged ignores the heartbeat writes of the cluster controller.
func (c *Controller) clusterChanged(old, cur *federationv1beta1.Cluster) {
	if federationv1beta1.IsClusterReady(old) != federationv1beta1.IsClusterReady(cur) || old.Status.Region != cur.Status.Region ||
		fmt.Sprint(old.Status.Zones) != fmt.Sprint(cur.Status.Zones) || leaving(old) != leaving(cur) {
		c.enqueueAll()
	}
}

// Run syncs Services until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting controller", "controller", Name, "zone", c.zone.Name())
	if !cache.WaitForNamedCacheSync(Name, ctx.Done(), c.synced...) {
		return fmt.Errorf("%s controller: caches did not sync", Name)
	}
	queueworker.RunWorkers(ctx, c.opts.Workers, c.queue, c.worker)
	return nil
}

func (c *Controller) worker(ctx context.Context) {
	queueworker.Run(ctx, c.queue, queueworker.Handlers[string]{Sync: c.sync, What: "Syncing service DNS records", KeyName: "service"})
}

// sync writes the records the Service should have; none when it is gone,
// being deleted or not a LoadBalancer.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	svc := dnsrecords.Service{Namespace: namespace, Name: name}
	obj, err := c.services.Services(namespace).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	var desired []dnsprovider.RecordSet
	// A Service being deleted loses its names at once, not only when its
	// member copies are gone (that may wait for an Offline cluster).
	// A local Service has no copies, so nothing to name.
	if err == nil && obj.Spec.Type == corev1.ServiceTypeLoadBalancer && obj.DeletionTimestamp == nil && !c.never.Has(namespace) && !federatedtypes.Local(obj) {
		clusters, err := c.clustersOf(obj)
		if err == nil {
			desired, err = dnsrecords.Desired(ctx, c.opts.Records, svc, clusters)
		}
		if err != nil {
			c.recorder.Eventf(obj, corev1.EventTypeWarning, ReasonRecordsFailed, "DNS records of %s: %v", key, err)
			return nil // retrying cannot help until the Service or a Cluster changes
		}
	}
	changes, err := dnsrecords.Apply(ctx, c.opts.Records, svc, c.zone, desired)
	if err != nil {
		return fmt.Errorf("writing the DNS records of service %s to zone %s: %w", key, c.zone.Name(), err)
	}
	if len(changes) > 0 {
		klog.FromContext(ctx).V(2).Info("DNS records updated", "service", key, "changes", len(changes))
		if obj != nil {
			c.recorder.Eventf(obj, corev1.EventTypeNormal, ReasonRecordsUpdated, "%d DNS record set(s) changed in zone %s", len(changes), c.zone.Name())
		}
	}
	return nil
}

// clustersOf joins the Service's service-ingresses annotation with every
// Cluster's health and topology. Every Cluster counts, also one the
// annotation does not list (the propagation controller leaves out clusters that
// are not Ready, or where the Service is not placed): its zones and region
// still get names, which fall back by CNAME (v1 wrote records for every
// cluster of the federation). A cluster that has left the federation does
// not count, nor one being deleted.
func (c *Controller) clustersOf(svc *corev1.Service) ([]dnsrecords.Cluster, error) {
	ingresses, err := serviceingresses.Parse(svc.Annotations[federationv1beta1.ServiceIngressesAnnotation])
	if err != nil {
		return nil, err
	}
	byCluster := map[string]serviceingresses.ClusterIngress{}
	for _, entry := range ingresses.Items {
		byCluster[entry.Cluster] = entry
	}
	clusters, err := c.clusters.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var out []dnsrecords.Cluster
	for _, cluster := range clusters {
		if leaving(cluster) {
			continue
		}
		entry, listed := byCluster[cluster.Name]
		dc := dnsrecords.Cluster{
			Name:              cluster.Name,
			Ready:             federationv1beta1.IsClusterReady(cluster),
			Zones:             cluster.Status.Zones,
			Region:            cluster.Status.Region,
			HasReadyEndpoints: listed && entry.Items != nil,
		}
		for _, in := range entry.Items {
			if in.IP != "" {
				dc.IngressIPs = append(dc.IngressIPs, in.IP)
			}
			if in.Hostname != "" {
				dc.IngressHostnames = append(dc.IngressHostnames, in.Hostname)
			}
		}
		out = append(out, dc)
	}
	slices.SortFunc(out, func(a, b dnsrecords.Cluster) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// leaving reports whether a Cluster is being deleted.
func leaving(c *federationv1beta1.Cluster) bool {
	return c.DeletionTimestamp != nil
}
