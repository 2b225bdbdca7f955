// Package queueworker is the worker loop every controller here runs, after
// the Kubernetes sample-controller: take a key, sync it, forget it when the
// sync succeeded and retry it with the queue's rate limit when it failed.
package queueworker

import (
	"context"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// Handlers are what a controller does with a key.
type Handlers[T comparable] struct {
	// Sync reconciles one key.
	Sync func(ctx context.Context, key T) error
	// Failed, optional, is told of a failed sync before the retry (to count
	// it, say). The error is reported to utilruntime with What, unless it is
	// a conflict (logged at level 2).
	Failed func(key T, err error)
	// Succeeded, optional, is told of a successful sync (to poll again
	// later, say).
	Succeeded func(key T)
	// What names the work in error reports, such as "Syncing cluster health".
	What string
	// KeyName names the key in error reports, such as "cluster".
	KeyName string
}

// Run works on keys from queue until it shuts down. Once ctx has ended, the
// keys still queued are dropped unsynced: the process is stopping, or has
// lost its leader lease, and must write nothing more; whoever runs the
// controllers next syncs every object from its informers' initial lists.
func Run[T comparable](ctx context.Context, queue workqueue.TypedRateLimitingInterface[T], h Handlers[T]) {
	for {
		key, shutdown := queue.Get()
		if shutdown {
			return
		}
		Handle(ctx, queue, key, h)
	}
}

// Handle works on one key taken from queue with Get, as Run does: for
// workers that take their keys themselves.
func Handle[T comparable](ctx context.Context, queue workqueue.TypedRateLimitingInterface[T], key T, h Handlers[T]) {
	if ctx.Err() != nil {
		queue.Done(key)
		return
	}
	err := h.Sync(ctx, key)
	queue.Done(key)
	var later RetryAfter
	if errors.As(err, &later) {
		// Not a failure to back off from: the work itself knows when
		// it may go on (a budget's wait).
		klog.FromContext(ctx).V(2).Info(h.What+": waiting", h.KeyName, key, "for", later.RetryAfter(), "reason", err)
		queue.AddAfter(key, later.RetryAfter())
		return
	}
	if err != nil {
		report(ctx, err, h.What, h.KeyName, key)
		if h.Failed != nil {
			h.Failed(key, err)
		}
		queue.AddRateLimited(key)
		return
	}
	queue.Forget(key)
	if h.Succeeded != nil {
		h.Succeeded(key)
	}
}

// RetryAfter is an error of work that may not go on before a known time
// (a budget's wait, say): its key is added again after RetryAfter, not
// with the queue's backoff, and the error is not reported as a failure.
type RetryAfter interface {
	error
	RetryAfter() time.Duration
}

// report tells of a failed sync. A conflict (the object changed since it
// was read: optimistic concurrency at work, retried with the next read) is
// logged at level 2, not as an error: on a busy federation they are many
// and say nothing is wrong.
func report[T comparable](ctx context.Context, err error, what, keyName string, key T) {
	if apierrors.IsConflict(err) {
		klog.FromContext(ctx).V(2).Info(what+": conflict, retrying", keyName, key, "err", err)
		return
	}
	utilruntime.HandleErrorWithContext(ctx, err, what, keyName, key)
}

// Queue is what RunWorkers shuts down.
type Queue interface {
	ShutDown()
}

// RunWorkers runs workers copies of worker (at least one; each is started
// again a second after it returns) until ctx ends, then shuts queue down
// and returns once every worker has returned: the key a worker holds is
// finished, with ctx cancelled, and the rest dropped (see Run). A
// controller's Run ends with it, so that the controller manager knows
// when nothing of its controllers writes any more.
func RunWorkers(ctx context.Context, workers int, queue Queue, worker func(context.Context)) {
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() { wait.UntilWithContext(ctx, worker, time.Second) })
	}
	<-ctx.Done()
	queue.ShutDown()
	wg.Wait()
}
