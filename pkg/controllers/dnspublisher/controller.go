// Package dnspublisher keeps the federation's DNS settings published at the
// federation: the ConfigMap federationv1beta1.DNSConfigMap in the
// federation's namespace, holding the zone and the address of the DNS
// server that answers for it, which `kubefed join` reads to point a
// member's cluster DNS at the federation. A control plane run in a cluster
// (Helm, kubefed init --host-cluster-context) has no kubefed init --local
// to write it, so the controller manager does, from its DNS provider
// config, and writes it again should it be deleted or changed.
package dnspublisher

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	corev1apply "k8s.io/client-go/applyconfigurations/core/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/queueworker"
)

// Name is the controller's name in --controllers.
const Name = "dns-publisher"

// FieldManager owns the published keys (server-side apply).
const FieldManager = "federation-controller-manager"

// Settings are what the ConfigMap publishes.
type Settings struct {
	// Zone is the federation's DNS zone, ending in a dot (example.com.).
	Zone string
	// Server is where the zone is answered: host:port, or several of them
	// separated by spaces (a CoreDNS forward's targets).
	Server string
}

// Controller keeps the DNS ConfigMap holding Settings.
type Controller struct {
	client   kubernetes.Interface
	settings Settings
	// informers watch the DNS ConfigMap alone (a metadata.name field
	// selector): the controller manager may read no other by its role.
	informers  kubeinformers.SharedInformerFactory
	configMaps corelisters.ConfigMapLister
	synced     cache.InformerSynced
	// queue holds the one key, the ConfigMap's name.
	queue workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller publishing s through client.
func New(client kubernetes.Interface, s Settings) (*Controller, error) {
	if s.Zone == "" || s.Server == "" {
		return nil, errors.New("publishing the DNS settings needs both a zone and a server address")
	}
	informers := kubeinformers.NewSharedInformerFactoryWithOptions(client, 0,
		kubeinformers.WithNamespace(federationv1beta1.SystemNamespace),
		kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", federationv1beta1.DNSConfigMap).String()
		}))
	configMaps := informers.Core().V1().ConfigMaps()
	c := &Controller{
		client:     client,
		settings:   s,
		informers:  informers,
		configMaps: configMaps.Lister(),
		synced:     configMaps.Informer().HasSynced,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: Name}),
	}
	enqueue := func(any) { c.queue.Add(federationv1beta1.DNSConfigMap) }
	if _, err := configMaps.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run keeps the ConfigMap published until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	klog.FromContext(ctx).Info("Starting controller", "controller", Name, "zone", c.settings.Zone, "server", c.settings.Server)
	c.informers.Start(ctx.Done())
	defer c.informers.Shutdown()
	if !cache.WaitForNamedCacheSync(Name, ctx.Done(), c.synced) {
		return fmt.Errorf("%s controller: caches did not sync", Name)
	}
	// A ConfigMap that does not exist sends no event.
	c.queue.Add(federationv1beta1.DNSConfigMap)
	queueworker.RunWorkers(ctx, 1, c.queue, func(ctx context.Context) {
		queueworker.Run(ctx, c.queue, queueworker.Handlers[string]{Sync: c.sync, What: "Publishing the DNS settings", KeyName: "configmap"})
	})
	return nil
}

// sync writes the settings unless the ConfigMap already holds them. Other
// keys someone added stay; the two published ones are taken over (forced),
// as the controller manager's configuration is what members must use.
func (c *Controller) sync(ctx context.Context, name string) error {
	cm, err := c.configMaps.ConfigMaps(federationv1beta1.SystemNamespace).Get(name)
	switch {
	case err == nil && c.holdsSettings(cm):
		return nil
	case err != nil && !apierrors.IsNotFound(err):
		return err
	}
	apply := corev1apply.ConfigMap(name, federationv1beta1.SystemNamespace).WithData(map[string]string{
		federationv1beta1.DNSZoneKey:   c.settings.Zone,
		federationv1beta1.DNSServerKey: c.settings.Server,
	})
	if _, err := c.client.CoreV1().ConfigMaps(federationv1beta1.SystemNamespace).Apply(ctx, apply,
		metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
		return fmt.Errorf("publishing the DNS settings in %s/%s: %w", federationv1beta1.SystemNamespace, name, err)
	}
	klog.FromContext(ctx).Info("Published the DNS settings", "configmap", klog.KRef(federationv1beta1.SystemNamespace, name),
		"zone", c.settings.Zone, "server", c.settings.Server)
	return nil
}

func (c *Controller) holdsSettings(cm *corev1.ConfigMap) bool {
	return cm.Data[federationv1beta1.DNSZoneKey] == c.settings.Zone && cm.Data[federationv1beta1.DNSServerKey] == c.settings.Server
}
