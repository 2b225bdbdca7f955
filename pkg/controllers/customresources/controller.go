package customresources

import (
	"context"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/cachetrim"
	"github.com/federation-v1/federation/pkg/controllers/propagation"
	"github.com/federation-v1/federation/pkg/ownership"
	"github.com/federation-v1/federation/pkg/queueworker"
)

// Name is the name in --controllers of the controller that runs the
// custom resources' propagation controllers: "-customresources" turns all
// of them off, "-<plural>.<group>" one.
const Name = "customresources"

// ReasonBadCustomResourceDefinition is the event on a federated CRD whose
// custom resources cannot be propagated.
const ReasonBadCustomResourceDefinition = "CustomResourcesNotPropagated"

// Controller runs a propagation controller for the custom resources of
// each CRD Established at the federation, built from the CRD (Type), and
// stops it when the CRD goes (or changes: it then starts again). A stopped
// controller leaves nothing running: its watches of the members are let
// go (the members' informers of the resource stop) and its informer of
// the federation has returned.
type Controller struct {
	// fed reaches the federation's custom resources.
	fed dynamic.Interface
	// crds and synced are the federation's cache of CRDs.
	crds   cache.GenericLister
	synced cache.InformerSynced
	// members are the member clusters' clients and caches.
	members Manager
	// enabled says whether a CRD's controller runs (--controllers).
	enabled  func(crd string) bool
	recorder record.EventRecorder
	opts     propagation.Options
	// tombstones are the federation's tombstones (WatchTombstones); nil
	// when not watched.
	tombstones coreinformers.ConfigMapInformer
	// queue holds CRD names.
	queue workqueue.TypedRateLimitingInterface[string]

	mu sync.Mutex
	// ctx is Run's: the custom resources' controllers run within it.
	ctx     context.Context
	running map[string]*running
	// kept are the UIDs of CRDs seen being deleted with the orphan
	// finalizer (a CRD's first delete ignores propagationPolicy Orphan,
	// as on a cluster; a second delete may add it): their custom
	// resources' copies are given back to the members, never deleted,
	// even once the finalizer is off.
	kept map[types.UID]bool
}

// running is one CRD's propagation controller.
type running struct {
	// uid, generation and aggregation (AggregationAnnotation) are the
	// CRD's when it started: a change of any restarts it.
	uid         string
	generation  int64
	aggregation string
	cancel      context.CancelFunc
	done        chan struct{}
	// pc is the controller: what is left of its copies when the CRD is
	// being deleted.
	pc *propagation.Controller
}

// New wires the controller to the federation's informer of CRDs.
func New(fed dynamic.Interface, crds informers.GenericInformer, members Manager, enabled func(string) bool,
	recorder record.EventRecorder, opts propagation.Options) (*Controller, error) {
	c := &Controller{
		fed: fed, crds: crds.Lister(), synced: crds.Informer().HasSynced, members: members, enabled: enabled,
		recorder: recorder, opts: opts, running: map[string]*running{}, kept: map[types.UID]bool{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: Name}),
	}
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
	}
	if _, err := crds.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// WatchTombstones has each custom resource's controller delete the member
// copies of deleted custom resources from their tombstones, which the
// federation apiserver writes as it deletes them. Call it before Run.
func (c *Controller) WatchTombstones(informer coreinformers.ConfigMapInformer) {
	c.tombstones = informer
}

// Run starts and stops the custom resources' controllers until ctx ends,
// then stops them all.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	logger := klog.FromContext(ctx).WithValues("controller", Name)
	ctx = klog.NewContext(ctx, logger)
	c.mu.Lock()
	c.ctx = ctx
	c.mu.Unlock()
	if !cache.WaitForNamedCacheSync(Name, ctx.Done(), c.synced) {
		return fmt.Errorf("%s controller: caches did not sync", Name)
	}
	queueworker.RunWorkers(ctx, 1, c.queue, func(ctx context.Context) {
		queueworker.Run(ctx, c.queue, queueworker.Handlers[string]{Sync: c.Sync, What: "Starting the propagation of custom resources", KeyName: "crd"})
	})
	c.mu.Lock()
	all := make([]*running, 0, len(c.running))
	for _, r := range c.running {
		all = append(all, r)
	}
	c.mu.Unlock()
	for _, r := range all {
		<-r.done
	}
	return nil
}

// Sync starts, restarts or stops the controller of one CRD's resources.
// It runs while the CRD is being deleted, so that the custom resources
// deleted with it let their member copies go (withdrawn).
func (c *Controller) Sync(ctx context.Context, name string) error {
	crd, err := c.get(name)
	if err != nil {
		return err
	}
	c.mu.Lock()
	r := c.running[name]
	if crd != nil {
		c.keepIfOrphaned(crd)
	} else if r != nil {
		delete(c.kept, types.UID(r.uid))
	}
	c.mu.Unlock()
	want := crd != nil && Established(crd) && c.enabled(name)
	if r != nil && (!want || r.uid != string(crd.UID) || r.generation != crd.Generation || r.aggregation != crd.Annotations[AggregationAnnotation]) {
		klog.FromContext(ctx).Info("Stopping the propagation of custom resources", "crd", name)
		r.cancel()
		<-r.done
		c.mu.Lock()
		delete(c.running, name)
		c.mu.Unlock()
		r = nil
	}
	if !want || r != nil {
		return nil
	}
	return c.start(ctx, crd)
}

func (c *Controller) get(name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	obj, err := c.crds.Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("CustomResourceDefinition %s: unexpected %T in the cache", name, obj)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
		return nil, fmt.Errorf("CustomResourceDefinition %s: %w", name, err)
	}
	return crd, nil
}

// start builds and runs the propagation controller of crd's resources,
// with its own federation informer and member caches.
func (c *Controller) start(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	t, err := Type(crd)
	if err != nil {
		c.recorder.Eventf(crd, corev1.EventTypeWarning, ReasonBadCustomResourceDefinition, "%v", err)
		return nil
	}
	c.mu.Lock()
	parent := c.ctx
	c.mu.Unlock()
	uid := crd.UID
	t.Withdrawn = func(cluster string) (bool, bool) { return c.withdrawn(crd.Name, uid, cluster) }
	informer := dynamicinformer.NewFilteredDynamicInformer(c.fed, t.Resource, metav1.NamespaceAll, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil)
	_ = informer.Informer().SetTransform(cachetrim.ManagedFields)
	members := newMemberCaches(c.members, t.Resource, crd.Name)
	pc, err := propagation.New(t, c.fed, informer, members, c.recorder, c.opts)
	if err != nil {
		return err
	}
	if c.tombstones != nil {
		if err := pc.WatchTombstones(c.tombstones); err != nil {
			return fmt.Errorf("CustomResourceDefinition %s: %w", crd.Name, err)
		}
	}
	runCtx, cancel := context.WithCancel(parent)
	r := &running{uid: string(crd.UID), generation: crd.Generation, aggregation: crd.Annotations[AggregationAnnotation],
		cancel: cancel, done: make(chan struct{}), pc: pc}
	c.mu.Lock()
	c.running[crd.Name] = r
	c.mu.Unlock()
	klog.FromContext(ctx).Info("Starting the propagation of custom resources", "crd", crd.Name, "resource", t.Resource.String())
	informerDone := make(chan struct{})
	go func() {
		defer close(informerDone)
		informer.Informer().RunWithContext(runCtx)
	}()
	members.start(runCtx)
	go func() {
		// Done once nothing of the controller runs: its federation
		// informer has returned, and the members' informers of its
		// resource, which no one else watches, have stopped.
		defer close(r.done)
		// Stopped before its caches synced is no failure.
		if err := pc.Run(runCtx); err != nil && runCtx.Err() == nil {
			klog.FromContext(runCtx).Error(err, "Propagation of custom resources stopped", "crd", crd.Name)
		}
		<-runCtx.Done()
		members.release()
		<-informerDone
	}()
	return nil
}

// keepIfOrphaned remembers a CRD being deleted with the orphan finalizer.
// Call with c.mu held.
func (c *Controller) keepIfOrphaned(crd metav1.Object) {
	if crd.GetDeletionTimestamp() != nil && slices.Contains(crd.GetFinalizers(), metav1.FinalizerOrphanDependents) {
		c.kept[crd.GetUID()] = true
	}
}

// getMeta returns the metadata of the CRD name from the cache, nil when it
// is gone: what withdrawn reads, for every cluster of every custom
// resource gone, without converting the whole CRD as get does.
func (c *Controller) getMeta(name string) (metav1.Object, error) {
	obj, err := c.crds.Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return meta.Accessor(obj)
}

// withdrawn tells the propagation controller of the CRD name with uid
// whether the CRD is being deleted (or gone), so that the copies in
// cluster of its custom resources gone with it are let go, and whether
// they are kept (given back to the members). Not where the member's CRD
// is a copy the federation made: its deletion takes them. A CRD of that
// name with another UID is a new one: its controller replaces this one,
// which lets nothing go.
func (c *Controller) withdrawn(name string, uid types.UID, cluster string) (withdrawn, keep bool) {
	crd, err := c.getMeta(name)
	if err != nil || (crd != nil && crd.GetUID() != uid) {
		return false, false
	}
	c.mu.Lock()
	if crd != nil {
		c.keepIfOrphaned(crd)
	}
	keep = c.kept[uid]
	c.mu.Unlock()
	if crd != nil && crd.GetDeletionTimestamp() == nil {
		return false, false
	}
	if keep {
		return true, true
	}
	// The members' caches hold the federation's objects only: a CRD not
	// found there is the member's own, or none (the member's cache of the
	// resource then says it is not served).
	if own, ok := c.members.Get(cluster, CRDResource, "", name); ok &&
		ownership.OurCopy(own, c.members.Federation(), c.members.FederationUID()) && !ownership.IsAdopted(own) {
		return false, false
	}
	return true, false
}

// Dependents names what the deletion of a federated CRD still waits for
// (federatedtypes.Type.Dependents of CRDs), "" when nothing: its custom
// resources being deleted at the federation (the apiextensions server's
// finalizer), then their copies let go in the members by the propagation
// controller of its custom resources. A CRD whose custom resources are not
// propagated (turned off, never Established, unusable) waits for nothing.
func (c *Controller) Dependents(fed *unstructured.Unstructured) string {
	name := fed.GetName()
	if !c.enabled(name) {
		return ""
	}
	if slices.Contains(fed.GetFinalizers(), apiextensionsv1.CustomResourceCleanupFinalizer) {
		return "its custom resources are being deleted at the federation"
	}
	c.mu.Lock()
	r := c.running[name]
	c.mu.Unlock()
	if r != nil && r.uid == string(fed.GetUID()) {
		return r.pc.WithdrawnLeft()
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(fed.Object, crd); err != nil || !Established(crd) {
		return ""
	}
	if _, err := Type(crd); err != nil {
		return ""
	}
	return "the propagation controller of its custom resources is starting"
}
