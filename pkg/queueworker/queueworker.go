// Package queueworker is the worker loop every controller here runs, after
// the Kubernetes sample-controller: take a key, sync it, forget it when the
// sync succeeded and retry it with the queue's rate limit when it failed.
package queueworker

import (
	"context"
	"sync"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
)

// Handlers are what a controller does with a key.
type Handlers[T comparable] struct {
	// Sync reconciles one key.
	Sync func(ctx context.Context, key T) error
	// Failed, optional, is told of a failed sync before the retry (to count
	// it, say). The error is always reported to utilruntime with What.
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
		if ctx.Err() != nil {
			queue.Done(key)
			continue
		}
		err := h.Sync(ctx, key)
		queue.Done(key)
		if err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, h.What, h.KeyName, key)
			if h.Failed != nil {
				h.Failed(key, err)
			}
			queue.AddRateLimited(key)
			continue
		}
		queue.Forget(key)
		if h.Succeeded != nil {
			h.Succeeded(key)
		}
	}
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
