package queues

import (
	"context"

	"k8s.io/client-go/util/workqueue"

	"github.com/federation-v1/federation/pkg/queueworker"
)

// clusterQueue is one cluster's queue and its workers. The workers are
// started as keys come, up to Queues.workers, and return once the queue
// is empty: a member with nothing to write costs no worker, only the
// delaying queue's goroutine. (With workers always running, each cluster
// and type that was ever written kept 20 idle goroutines: at 50 members
// and ten types in use, 10,000.)
type clusterQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	cluster string
	// ctx runs the workers, nil until Queues.Run; cancel stops them.
	ctx    context.Context
	cancel context.CancelFunc
	// active counts the running workers. Guarded by Queues.mu.
	active int
}

// wakingQueue is a queue that calls wake after each key added, including
// those the delaying queue adds once their wait is over.
type wakingQueue struct {
	workqueue.TypedInterface[string]
	wake func()
}

func (w *wakingQueue) Add(key string) {
	w.TypedInterface.Add(key)
	w.wake()
}

// newClusterQueue makes a cluster's queue; its workers start once Run has
// given it a context.
func (q *Queues) newClusterQueue(cluster string) *clusterQueue {
	name := q.name + "_" + cluster
	cq := &clusterQueue{cluster: cluster}
	waking := &wakingQueue{
		TypedInterface: workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: name}),
		wake:           func() { q.wake(cq) },
	}
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: name, Queue: waking})
	cq.TypedRateLimitingInterface = workqueue.NewTypedRateLimitingQueueWithConfig(q.newLimiter(),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name, DelayingQueue: delaying})
	return cq
}

// wake starts a worker for cq if it has keys no worker will take. Never
// called with q.mu held: keys are added outside it.
func (q *Queues) wake(cq *clusterQueue) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.startWorkerLocked(cq)
}

// startWorkerLocked starts one more worker of cq, unless Run has not
// started, Wait has, every worker runs, or no key waits.
func (q *Queues) startWorkerLocked(cq *clusterQueue) bool {
	if cq.ctx == nil || q.stopped || cq.active >= q.workers || cq.Len() == 0 {
		return false
	}
	cq.active++
	q.running.Go(func() { q.work(cq) })
	return true
}

// work takes cq's keys until it is empty. Keys are taken under q.mu, so
// that a worker that saw one waiting never blocks in Get (another took
// it): the last worker out leaves no key behind, and the next key added
// starts a worker again.
func (q *Queues) work(cq *clusterQueue) {
	cluster := cq.cluster
	h := queueworker.Handlers[string]{
		Sync: func(ctx context.Context, objKey string) error { return q.process(ctx, cluster, objKey) },
		What: q.what + " to cluster " + cluster, KeyName: "key",
	}
	for {
		q.mu.Lock()
		if cq.Len() == 0 {
			cq.active--
			q.mu.Unlock()
			return
		}
		objKey, shutdown := cq.Get()
		q.mu.Unlock()
		if shutdown {
			q.mu.Lock()
			cq.active--
			q.mu.Unlock()
			return
		}
		queueworker.Handle(cq.ctx, cq, objKey, h)
	}
}
