// Package deploymenthistory keeps a federated Deployment's revision history
// at the federation, as Kubernetes' deployment controller keeps it in a
// cluster: one ReplicaSet per pod template, named
// <deployment>-<pod-template-hash>, with the revision annotations, owned by
// the Deployment. kubectl rollout history/undo and Helm's --wait find them
// as on a cluster. They are labelled federation.kubernetes.io/local, so they
// are never propagated: each member's deployment controller makes its own.
//
// The controller also writes the Deployment's current revision annotation,
// performs the extensions/v1beta1 rollback subresource's request (the
// deprecated.deployment.rollback.to annotation), gives the history
// ReplicaSets a status split from the Deployment's aggregated status, keeps
// at most spec.revisionHistoryLimit old ones and deletes the history of a
// Deployment that is gone (the federation runs no garbage collector).
package deploymenthistory

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kubeinformers "k8s.io/client-go/informers"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/cachetrim"
	"github.com/federation-v1/federation/pkg/queueworker"
)

// Name is the controller's name in --controllers.
const Name = "deployment-history"

// Controller keeps the revision history of federated Deployments.
type Controller struct {
	client kubernetes.Interface
	// deployments lists every federated Deployment.
	deployments appslisters.DeploymentLister
	// history indexes the local ReplicaSets only (history and other
	// objects labelled local; the federated ones are not ours) by the
	// Deployment that controls them (historyIndex).
	history cache.Indexer
	// localInformers is the factory of the label-filtered ReplicaSet
	// informer, started by Run.
	localInformers kubeinformers.SharedInformerFactory
	synced         []cache.InformerSynced
	// queue holds namespace/name keys of Deployments.
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder
	// workers sync Deployments in parallel.
	workers int
}

// New wires the controller to the federation's Deployments; it watches the
// federation's local ReplicaSets itself, through a label-filtered informer.
func New(client kubernetes.Interface, deployments appsinformers.DeploymentInformer, resync time.Duration,
	recorder record.EventRecorder, workers int) (*Controller, error) {
	local := kubeinformers.NewSharedInformerFactoryWithOptions(client, resync, kubeinformers.WithTransform(cachetrim.ManagedFields), kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = federationv1beta1.LocalLabel + "=true"
	}))
	replicaSets := local.Apps().V1().ReplicaSets()
	if err := replicaSets.Informer().AddIndexers(cache.Indexers{historyIndex: historyIndexFunc}); err != nil {
		return nil, err
	}
	c := &Controller{
		client:         client,
		deployments:    deployments.Lister(),
		history:        replicaSets.Informer().GetIndexer(),
		localInformers: local,
		synced:         []cache.InformerSynced{deployments.Informer().HasSynced, replicaSets.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: Name}),
		recorder: recorder,
		workers:  max(workers, 1),
	}
	if _, err := deployments.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	}); err != nil {
		return nil, err
	}
	// A history ReplicaSet changed or deleted by someone else is put back
	// in order by its Deployment's sync.
	if _, err := replicaSets.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueOwner,
		UpdateFunc: func(_, obj any) { c.enqueueOwner(obj) },
		DeleteFunc: c.enqueueOwner,
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

// enqueueOwner enqueues the Deployment a history ReplicaSet belongs to.
func (c *Controller) enqueueOwner(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		return
	}
	if ref := historyOwner(rs); ref != nil {
		c.queue.Add(historyKey(rs.Namespace, ref.Name))
	}
}

// Run syncs Deployments until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting controller", "controller", Name)
	c.localInformers.Start(ctx.Done())
	defer c.localInformers.Shutdown()
	if !cache.WaitForNamedCacheSync(Name, ctx.Done(), c.synced...) {
		return fmt.Errorf("%s controller: caches did not sync", Name)
	}
	queueworker.RunWorkers(ctx, c.workers, c.queue, c.worker)
	return nil
}

func (c *Controller) worker(ctx context.Context) {
	queueworker.Run(ctx, c.queue, queueworker.Handlers[string]{Sync: c.syncOrRetry, What: "Syncing the revision history", KeyName: "deployment"})
}

// staleRetry is how soon a Deployment is looked at again when our cache was
// behind the federation apiserver.
const staleRetry = 250 * time.Millisecond

// syncOrRetry syncs key; a conflict is not an error: the propagation
// controller writes the same Deployments (replica plan, status) and our
// cache was behind it, so the Deployment is looked at again shortly,
// without the error backoff.
func (c *Controller) syncOrRetry(ctx context.Context, key string) error {
	err := c.sync(ctx, key)
	if apierrors.IsConflict(err) {
		klog.FromContext(ctx).V(4).Info("Cache behind, looking again", "deployment", key, "err", err)
		c.queue.AddAfter(key, staleRetry)
		return nil
	}
	return err
}
