package propagation

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/syncmetrics"
	"github.com/federation-v1/federation/pkg/controllers/propagation/release"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/queueworker"
)

// Options tune every propagation controller.
type Options struct {
	// Workers reconciling federated objects of one type in parallel, and
	// writing to each member cluster in parallel.
	Workers int
	// MemberTimeout bounds every call to a member cluster.
	MemberTimeout time.Duration
	// DeletionWait is how long the deletion of a federated object waits for
	// a selected cluster that is not Ready before giving up on its copy.
	DeletionWait time.Duration
	// UnschedulableWindow is how long a workload's pods stay unschedulable
	// in a member before they lower its capacity there.
	UnschedulableWindow time.Duration
	// NeverPropagatedNamespaces are the namespaces whose objects, and the
	// Namespaces of those names, are never propagated (refused.go); nil
	// means federatedtypes.DefaultNeverPropagatedNamespaces. The
	// federation's own namespace is always one of them.
	NeverPropagatedNamespaces []string
	// DefaultConflictResolution is what is done with a member's own
	// object of a federated object's name when the federated object does
	// not say (ConflictResolutionAnnotation): "abort" (or "") leaves it
	// and reports the conflict, "adopt" takes it over (ownership.go).
	DefaultConflictResolution string
	// LocalSecretTypes are the Secret types that stay at the federation
	// (federatedtypes.LocalWith); nil means
	// federatedtypes.DefaultLocalSecretTypes.
	LocalSecretTypes []string
	// UnheldReferenceRecheck is how often what copies in sync may use and
	// the member caches do not hold as ours (optional references, a
	// StatefulSet's next claims) is looked for in the members (unheld.go);
	// 0 never.
	UnheldReferenceRecheck time.Duration
}

// Members is what a propagation controller needs of the member clusters:
// the writer's, and their watches.
type Members interface {
	writer.Members
	Watch(gvr schema.GroupVersionResource, h membercluster.Handler)
	WatchMetadata(gvr schema.GroupVersionResource, h membercluster.Handler)
	AllClusters() ([]*federationv1beta1.Cluster, error)
	// Settled says whether every Ready cluster's caches have synced (or
	// were given their time): plans wait for it (membercluster.Manager).
	Settled() bool
	List(cluster string, gvr schema.GroupVersionResource, namespace string, selector labels.Selector) []*unstructured.Unstructured
	ListMetadata(cluster string, gvr schema.GroupVersionResource, namespace string, selector labels.Selector) []metav1.Object
	Forbidden(cluster string, gvr schema.GroupVersionResource) bool
	Unserved(cluster string, gvr schema.GroupVersionResource) bool
}

// Controller propagates the federated objects of one type.
type Controller struct {
	// typ says what travels and what comes back.
	typ *federatedtypes.Type
	// objs are the type's objects at the federation: the cache (lister),
	// and the client that writes their finalizers and status.
	objs fedobject.Objects
	// fedClient reaches the other federated types (an HPA's target).
	fedClient dynamic.Interface
	// lister and synced are the federation-side cache of the type.
	lister cache.GenericLister
	synced cache.InformerSynced
	// members are the member clusters' clients and caches.
	members Members
	// queue holds keys (namespace/name) of federated objects.
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder
	opts     Options
	// w writes the copies to the members (package writer).
	w *writer.Writer
	// capacity bounds divided workloads by what members can schedule; nil
	// when not estimated.
	capacity Capacity
	// changes time the propagation of each change.
	changes *changeTimes
	// r lets copies go: deletion, tombstones, refused and local objects
	// (package release).
	r *release.Releaser
	// overridesTold holds, by key, what the events last said of the
	// object's per-cluster overrides (overrides.go).
	overridesTold sync.Map
	// referenced are the resources copies of the type may name
	// (references.go).
	referenced []schema.GroupVersionResource
	// tombstonesSynced tells when the tombstones' informer synced; nil
	// when they are not watched (tombstones.go).
	tombstonesSynced cache.InformerSynced
	// unwatchTombstones removes the tombstones' handler when Run returns;
	// nil when they are not watched.
	unwatchTombstones func()
	// initial tells when every object found at start was reconciled
	// (initial.go).
	initial *initialSync
}

// New wires a controller for one type to the federation's informer of it.
func New(t *federatedtypes.Type, fed dynamic.Interface, informer informers.GenericInformer, members Members,
	recorder record.EventRecorder, opts Options) (*Controller, error) {
	c := newController(t, fed, informer.Lister(), members, recorder, opts)
	c.synced = informer.Informer().HasSynced
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.federatedChanged,
		UpdateFunc: func(old, obj any) {
			if needsSync(old, obj) || statusTampered(t, obj) {
				c.federatedChanged(obj)
			}
		},
		DeleteFunc: c.federatedChanged,
	}); err != nil {
		return nil, err
	}
	if t.MetadataOnly() {
		members.WatchMetadata(t.Resource, c)
	} else {
		members.Watch(t.Resource, c)
	}
	if t.Endpoints {
		members.Watch(endpointSlices, c)
	}
	for _, r := range c.referenced {
		members.WatchMetadata(r, c)
	}
	return c, nil
}

// newController makes the controller without wiring it to informers.
func newController(t *federatedtypes.Type, fed dynamic.Interface, lister cache.GenericLister, members Members,
	recorder record.EventRecorder, opts Options) *Controller {
	c := &Controller{
		typ:       t,
		objs:      fedobject.Objects{Type: t, Lister: lister, Client: fed},
		fedClient: fed,
		lister:    lister,
		members:   members,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(rateLimiter(),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "sync_" + t.Name}),
		recorder:   recorder,
		opts:       opts,
		changes:    newChangeTimes(t.Name),
		initial:    newInitialSync(t.Name),
		referenced: federatedtypes.ReferencedResources(t),
	}
	c.w = c.newWriter()
	c.r = c.newReleaser()
	return c
}

// newReleaser makes the release stage of the controller.
func (c *Controller) newReleaser() *release.Releaser {
	return release.New(c.typ, c.fedClient, c.lister, c.members, c.w, c.recorder, release.Config{DeletionWait: c.opts.DeletionWait,
		NeverPropagatedNamespaces: c.opts.NeverPropagatedNamespaces, LocalSecretTypes: c.opts.LocalSecretTypes})
}

// newWriter makes the writer of the controller's member writes.
func (c *Controller) newWriter() *writer.Writer {
	return writer.New(c.typ, c.fedClient, c.lister, c.members, c.recorder, writer.Config{Workers: c.opts.Workers,
		MemberTimeout: c.opts.MemberTimeout, DefaultConflictResolution: c.opts.DefaultConflictResolution,
		LocalSecretTypes: c.opts.LocalSecretTypes}, rateLimiter)
}

// rateLimiter backs off per object from 5ms to 30s (not the default 1000s:
// a member that comes back must be caught up within seconds), with an
// overall bucket of 50 per second.
func rateLimiter() workqueue.TypedRateLimiter[string] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 30*time.Second),
		&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(50), 300)},
	)
}

func (c *Controller) federatedChanged(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	if _, never := c.r.NeverPropagated(key); !never { // a refused object is not timed
		c.changes.seen(key)
	}
	c.queue.Add(key)
}

// MemberChanged enqueues the federated object of a member copy (or of a
// Service's EndpointSlice), or every federated object of a namespace that
// appeared or left in a member.
func (c *Controller) MemberChanged(cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	switch {
	case gvr == c.typ.Resource:
		objKey := fedobject.Key(obj.GetNamespace(), obj.GetName())
		c.w.Seen(cluster, objKey)
		// An echo of our own write needs no reconcile, unless the type's
		// status comes back from the members.
		if c.typ.Status != nil || c.typ.Endpoints || !c.w.IsEcho(cluster, objKey) {
			c.queue.Add(objKey)
		}
		// Copies of the type may name each other (ExternalName Services).
		if slices.Contains(c.referenced, gvr) {
			c.referenceChanged(cluster, gvr, obj)
		}
	case gvr == endpointSlices && c.typ.Endpoints:
		if service := obj.GetLabels()[serviceNameLabel]; service != "" {
			c.queue.Add(obj.GetNamespace() + "/" + service)
		}
	case slices.Contains(c.referenced, gvr):
		c.referenceChanged(cluster, gvr, obj)
	case gvr == membercluster.NamespacesResource && c.typ.Namespaced:
		c.w.NamespaceChanged(cluster, obj.GetName())
		c.enqueueAll(obj.GetName())
	}
}

// referenceChanged: when our copy of something our copies may name went
// (or was taken from us), those that name it are looked at again.
func (c *Controller) referenceChanged(cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	if _, still := c.members.Get(cluster, gvr, obj.GetNamespace(), obj.GetName()); !still {
		c.enqueueAll(obj.GetNamespace())
	}
}

// ClustersChanged forgets the member queues of clusters that left, and
// enqueues every federated object of the type.
func (c *Controller) ClustersChanged() {
	if all, err := c.members.AllClusters(); err == nil {
		joined := map[string]bool{}
		for _, cl := range all {
			joined[cl.Name] = true
		}
		c.w.ForgetClusters(func(cluster string) bool { return joined[cluster] })
	}
	c.enqueueAll("")
}

// cachedKeys are the keys of the federated objects in the cache, of one
// namespace or (namespace "") of all.
func (c *Controller) cachedKeys(namespace string) []string {
	list, err := c.lister.List(labels.Everything())
	if namespace != "" {
		list, err = c.lister.ByNamespace(namespace).List(labels.Everything())
	}
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, o := range list {
		if key, err := cache.MetaNamespaceKeyFunc(o); err == nil {
			out = append(out, key)
		}
	}
	return out
}

func (c *Controller) enqueueAll(namespace string) {
	for _, key := range c.cachedKeys(namespace) {
		c.queue.Add(key)
	}
}

// Run reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	if c.unwatchTombstones != nil {
		defer c.unwatchTombstones()
	}
	logger := klog.FromContext(ctx).WithValues("controller", c.typ.Name)
	ctx = klog.NewContext(ctx, logger)
	logger.Info("Starting controller", "workers", c.opts.Workers)
	c.r.Start(time.Now())
	synced := []cache.InformerSynced{c.synced}
	if c.tombstonesSynced != nil {
		synced = append(synced, c.tombstonesSynced)
	}
	if !cache.WaitForNamedCacheSync(c.typ.Name, ctx.Done(), synced...) {
		return fmt.Errorf("%s controller: caches did not sync", c.typ.Name)
	}
	c.initial.start(c.cachedKeys(""))
	c.w.Run(ctx)
	var background sync.WaitGroup
	background.Go(func() { c.r.CountStrays(ctx) })
	background.Go(func() { c.followWrites(ctx) })
	if c.typ.Withdrawn != nil {
		background.Go(func() { wait.UntilWithContext(ctx, c.sweepWithdrawn, withdrawnSweep) })
	}
	if c.opts.UnheldReferenceRecheck > 0 {
		background.Go(func() { wait.UntilWithContext(ctx, c.checkUnheld, c.opts.UnheldReferenceRecheck) })
	}
	queueworker.RunWorkers(ctx, c.opts.Workers, c.queue, c.worker)
	// Nothing of this controller writes once Run returns.
	c.w.Wait()
	background.Wait()
	logger.Info("Stopped controller")
	return nil
}

// followWrites does what the ends of member writes ask, until ctx ends.
func (c *Controller) followWrites(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.w.Ready():
			c.afterWrites()
		}
	}
}

// afterWrites does what the ends of member writes taken from the writer
// ask (writer.Outcome), in their order.
func (c *Controller) afterWrites() {
	for _, o := range c.w.Take() {
		if o.RecheckAfter > 0 {
			c.recheck(o.ObjKey, o.RecheckAfter)
		}
		if o.AllWritten {
			c.changes.propagated(o.ObjKey)
			c.initial.settled(o.ObjKey)
		}
		if o.Requeue {
			c.queue.Add(o.ObjKey)
		}
	}
}

// checkUnheld reconciles again the objects whose copies name what the
// member made (writer.CheckUnheld).
func (c *Controller) checkUnheld(ctx context.Context) {
	for _, objKey := range c.w.CheckUnheld(ctx) {
		c.queue.Add(objKey)
	}
}

func (c *Controller) worker(ctx context.Context) {
	queueworker.Run(ctx, c.queue, queueworker.Handlers[string]{
		Sync: c.Sync, What: "Syncing a federated " + c.typ.Kind, KeyName: "key", Succeeded: c.reconciled,
		Failed: func(string, error) { syncmetrics.Errors.WithLabelValues(c.typ.Name, "").Inc() },
	})
}

// withdrawnSweep is how often the copies whose object went with the type's
// definition are looked for, besides the events that bring them.
const withdrawnSweep = 5 * time.Second

// sweepWithdrawn queues the copies of ours whose object went with the
// type's definition (release.Withdrawn lets them go).
func (c *Controller) sweepWithdrawn(context.Context) {
	for _, strays := range c.r.WithdrawnStrays() {
		for _, s := range strays {
			c.queue.Add(fedobject.Key(s.GetNamespace(), s.GetName()))
		}
	}
}

// WithdrawnLeft names what is left to let go of the copies of a type whose
// definition is being deleted (Type.Withdrawn), "" when nothing.
func (c *Controller) WithdrawnLeft() string {
	if !c.synced() {
		return "the propagation controller of " + c.typ.Name + " is starting"
	}
	return c.r.WithdrawnLeft()
}
