// Package lbsim plays the cloud's part for member clusters that have none:
// every Service of type LoadBalancer gets an address from a pool in
// status.loadBalancer.ingress, and loses it when it stops being one. A deleted
// Service's address returns to the pool, since the pool in use is read from
// the Services that exist.
package lbsim

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// Controller assigns load-balancer addresses to Services.
type Controller struct {
	client   kubernetes.Interface
	pool     netip.Prefix
	services corelisters.ServiceLister
	synced   cache.InformerSynced
	// queue holds namespace/name keys; one worker, so allocations never race.
	queue workqueue.TypedRateLimitingInterface[string]
	// assigned remembers addresses written but not yet seen in the cache, so
	// that a lagging cache cannot hand the same address out twice.
	assigned map[string]netip.Addr
}

// New wires a controller to the factory's Service informer.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, pool netip.Prefix) (*Controller, error) {
	c := &Controller{
		client:   client,
		pool:     pool,
		assigned: map[string]netip.Addr{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "lbsim"}),
	}
	informer := factory.Core().V1().Services()
	c.services = informer.Lister()
	c.synced = informer.Informer().HasSynced
	_, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				c.queue.Add(key)
			}
		},
	})
	return c, err
}

func (c *Controller) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

// Run processes Services until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced) {
		return fmt.Errorf("lbsim: Service cache did not sync")
	}
	go wait.UntilWithContext(ctx, c.work, time.Second)
	<-ctx.Done()
	return nil
}

func (c *Controller) work(ctx context.Context) {
	for {
		key, shutdown := c.queue.Get()
		if shutdown {
			return
		}
		if err := c.sync(ctx, key); err != nil {
			klog.FromContext(ctx).Error(err, "Syncing load balancer", "service", key)
			c.queue.AddRateLimited(key)
		} else {
			c.queue.Forget(key)
		}
		c.queue.Done(key)
	}
}

// sync gives the Service an address when it is a LoadBalancer without one,
// and takes it away when it no longer is a LoadBalancer.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	svc, err := c.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		delete(c.assigned, key)
		return nil
	}
	if err != nil {
		return err
	}
	wantLB := svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	hasLB := len(svc.Status.LoadBalancer.Ingress) > 0
	if hasLB {
		delete(c.assigned, key) // the cache has caught up
	}
	if wantLB == hasLB {
		return nil
	}
	svc = svc.DeepCopy()
	svc.Status.LoadBalancer.Ingress = nil
	if wantLB {
		addr, err := c.nextAddress()
		if err != nil {
			return err
		}
		svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: addr.String()}}
	}
	if _, err := c.client.CoreV1().Services(ns).UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating load-balancer status of %s: %w", key, err)
	}
	if wantLB {
		c.assigned[key], _ = netip.ParseAddr(svc.Status.LoadBalancer.Ingress[0].IP)
	}
	klog.FromContext(ctx).Info("Load balancer updated", "service", key, "ingress", svc.Status.LoadBalancer.Ingress)
	return nil
}

// nextAddress picks the lowest pool address no Service holds.
func (c *Controller) nextAddress() (netip.Addr, error) {
	all, err := c.services.List(labels.Everything())
	if err != nil {
		return netip.Addr{}, err
	}
	used := map[netip.Addr]bool{}
	for _, a := range c.assigned {
		used[a] = true
	}
	for _, s := range all {
		for _, in := range s.Status.LoadBalancer.Ingress {
			if a, err := netip.ParseAddr(in.IP); err == nil {
				used[a] = true
			}
		}
	}
	return allocate(c.pool, used)
}
