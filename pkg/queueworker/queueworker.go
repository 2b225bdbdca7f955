// Package queueworker is the worker loop every controller here runs, after
// the Kubernetes sample-controller: take a key, sync it, forget it when the
// sync succeeded and retry it with the queue's rate limit when it failed.
package queueworker

import (
	"context"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
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

// Run works on keys from queue until it shuts down.
func Run[T comparable](ctx context.Context, queue workqueue.TypedRateLimitingInterface[T], h Handlers[T]) {
	for {
		key, shutdown := queue.Get()
		if shutdown {
			return
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
