package sync

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	stdsync "sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"

	fedv1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/queueworker"
)

// Member writes are work items of their own, one per (cluster, object), in
// one queue per cluster with Options.Workers workers each: a slow member
// holds up only its own copies, and every member is kept as busy as its
// client allows. The object's reconcile decides what each member should
// hold and hands the writes over; it does not wait for them.

// copyTask is what one member should hold of a federated object.
type copyTask struct {
	fed, desired *unstructured.Unstructured
	hash         string
	placed       bool
	// running: a worker has taken it. A task replaced meanwhile is told
	// apart by identity and runs next.
	running bool
	// eventWhileRunning: a member event of the copy came while it was
	// being written, and was taken for the write's echo (see seen); the
	// worker checks that once the write's answer is in.
	eventWhileRunning bool
	// failure is the last error writing the copy, for the object's
	// Propagated condition; such a task waits out its backoff.
	failure string
}

// copyEvent is one member write, told in the object's event once its
// copies are written.
type copyEvent struct {
	reason, verb, suffix string
	cluster              string
}

// objectWrites are an object's member writes not yet told in an event.
type objectWrites struct {
	obj    *unstructured.Unstructured
	events []copyEvent
}

// copyWork is the per-cluster queues and the tasks they hold.
type copyWork struct {
	mu stdsync.Mutex
	// ctx runs the clusters' workers; nil until Run (unit tests drain the
	// queues themselves).
	ctx    context.Context
	queues map[string]workqueue.TypedRateLimitingInterface[string]
	// stops end the workers of a cluster's queue.
	stops map[string]context.CancelFunc
	// pending holds, by object key and cluster, the copies to write.
	pending map[string]map[string]*copyTask
	// statusBehind holds the objects whose status was last written while
	// their copies were being written.
	statusBehind map[string]bool
	// written holds an object's writes until its copies are written, to
	// tell of them in one event.
	written map[string]*objectWrites
}

func newCopyWork() *copyWork {
	return &copyWork{
		queues:       map[string]workqueue.TypedRateLimitingInterface[string]{},
		stops:        map[string]context.CancelFunc{},
		pending:      map[string]map[string]*copyTask{},
		statusBehind: map[string]bool{},
		written:      map[string]*objectWrites{},
	}
}

// runCopies starts the workers of the clusters' queues (those made later
// start as they are made) and shuts the queues down when ctx ends.
func (c *Controller) runCopies(ctx context.Context) {
	w := c.copies
	w.mu.Lock()
	w.ctx = ctx
	for cluster, q := range w.queues {
		c.startCopyWorkers(cluster, q)
	}
	w.mu.Unlock()
	go func() {
		<-ctx.Done()
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, q := range w.queues {
			q.ShutDown()
		}
	}()
}

// startCopyWorkers starts a cluster's workers. Called with w.mu held.
func (c *Controller) startCopyWorkers(cluster string, q workqueue.TypedRateLimitingInterface[string]) {
	ctx, cancel := context.WithCancel(c.copies.ctx)
	c.copies.stops[cluster] = cancel
	for range max(c.opts.Workers, 1) {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			queueworker.Run(ctx, q, queueworker.Handlers[string]{
				Sync: func(ctx context.Context, key string) error { return c.syncCopy(ctx, cluster, key) },
				What: fmt.Sprintf("Writing a federated %s to cluster %s", c.adapter.Kind, cluster), KeyName: "key",
			})
		}, time.Second)
	}
}

// queueOf returns the cluster's queue, made (and its workers started) on
// first use. Called with w.mu held.
func (c *Controller) queueOf(cluster string) workqueue.TypedRateLimitingInterface[string] {
	w := c.copies
	q, ok := w.queues[cluster]
	if !ok {
		q = workqueue.NewTypedRateLimitingQueueWithConfig(rateLimiter(),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "sync_" + c.adapter.Name + "_" + cluster})
		w.queues[cluster] = q
		if w.ctx != nil {
			c.startCopyWorkers(cluster, q)
		}
	}
	return q
}

// memberWrite is what one member should be made to hold.
type memberWrite struct {
	cluster string
	desired *unstructured.Unstructured
	hash    string
	placed  bool
}

// dispatch hands an object's member writes over to their clusters' queues,
// all registered at once so that no copy is written (and told in an event)
// before its object's other copies are known to be pending. A task for the
// same copy that has not run yet is replaced; one that is running is
// followed by the new one.
func (c *Controller) dispatch(fed *unstructured.Unstructured, writes []memberWrite) {
	if len(writes) == 0 {
		return
	}
	w := c.copies
	objKey := key(fed.GetNamespace(), fed.GetName())
	var queues []workqueue.TypedRateLimitingInterface[string]
	w.mu.Lock()
	tasks := w.pending[objKey]
	if tasks == nil {
		tasks = map[string]*copyTask{}
		w.pending[objKey] = tasks
	}
	for _, mw := range writes {
		old := tasks[mw.cluster]
		if old != nil && !old.running && old.hash == mw.hash && old.placed == mw.placed {
			// The same write, still waiting: it goes as it is.
			old.fed, old.desired = fed, mw.desired
			continue
		}
		t := &copyTask{fed: fed, desired: mw.desired, hash: mw.hash, placed: mw.placed}
		if old != nil {
			t.running, t.failure = old.running, old.failure
		}
		tasks[mw.cluster] = t
		// A task waiting out a failure's backoff keeps waiting, unless what
		// it should write changed (a fix of what failed should not wait).
		if old == nil || old.hash != mw.hash || old.placed != mw.placed {
			queues = append(queues, c.queueOf(mw.cluster))
		}
	}
	w.mu.Unlock()
	for _, q := range queues {
		q.Add(objKey)
	}
}

// syncCopy runs the pending task of one member copy.
func (c *Controller) syncCopy(ctx context.Context, cluster, objKey string) error {
	w := c.copies
	w.mu.Lock()
	t := w.pending[objKey][cluster]
	if t == nil {
		w.mu.Unlock()
		return nil
	}
	t.running = true
	hadFailure := t.failure != ""
	w.mu.Unlock()

	var (
		ev  *copyEvent
		err error
	)
	if c.stillWanted(cluster, t) {
		ev, err = c.syncCluster(ctx, cluster, t.fed, t.desired, t.hash, t.placed)
	}

	w.mu.Lock()
	cur := w.pending[objKey][cluster]
	if cur != nil {
		cur.running = false
	}
	checkEcho := t.eventWhileRunning
	if err != nil {
		syncMetrics.errors.WithLabelValues(c.adapter.Name, cluster).Inc()
		if cur != nil {
			cur.failure = err.Error()
		}
	}
	if ev != nil {
		ev.cluster = cluster
		if w.written[objKey] == nil {
			w.written[objKey] = &objectWrites{}
		}
		w.written[objKey].obj = t.fed
		w.written[objKey].events = append(w.written[objKey].events, *ev)
	}
	newer := cur != nil && cur != t
	if cur == t && err == nil {
		w.finishLocked(objKey, cluster)
	}
	settled, done := w.settledLocked(objKey)
	var writes *objectWrites
	statusBehind := false
	if settled {
		writes = w.written[objKey]
		delete(w.written, objKey)
		// Its status was written while we wrote: the member events of
		// our writes may have come first.
		statusBehind = w.statusBehind[objKey] && writes != nil
		delete(w.statusBehind, objKey)
	}
	q, queued := w.queues[cluster]
	w.mu.Unlock()

	if writes != nil {
		c.recordCopies(writes.obj, writes.events)
	}
	if done {
		c.observeChange(objKey)
	}
	if settled && (err != nil || hadFailure || statusBehind) {
		// The object's Propagated condition tells of the failure, or of its
		// end. (Otherwise the writes of a type with status bring the object
		// back with their members' watch events.)
		c.queue.Add(objKey)
	} else if checkEcho && !c.holdsOurWrite(cluster, objKey) {
		// The event taken for our write's echo was somebody else's change.
		c.queue.Add(objKey)
	}
	if newer && queued {
		q.Add(objKey)
	}
	// A failure is retried with the copy's own backoff.
	return err
}

// writing reports whether the copy of objKey in cluster is being written,
// and if so notes that an event of it came meanwhile.
func (w *copyWork) writing(cluster, objKey string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.pending[objKey][cluster]
	if t == nil || !t.running {
		return false
	}
	t.eventWhileRunning = true
	return true
}

// forgetClusters stops the queues and drops the tasks of the clusters that
// left the federation (unjoined); a cluster that is only not Ready keeps
// its queue, and its tasks are dropped as they come up.
func (c *Controller) forgetClusters(joined []*fedv1.Cluster) {
	w := c.copies
	w.mu.Lock()
	defer w.mu.Unlock()
	for cluster, q := range w.queues {
		if slices.ContainsFunc(joined, func(cl *fedv1.Cluster) bool { return cl.Name == cluster }) {
			continue
		}
		if stop := w.stops[cluster]; stop != nil {
			stop()
		}
		q.ShutDown()
		delete(w.queues, cluster)
		delete(w.stops, cluster)
		for objKey, tasks := range w.pending {
			if t := tasks[cluster]; t != nil && !t.running {
				w.finishLocked(objKey, cluster)
			}
		}
	}
}

// stillWanted reports whether a task should run: its cluster is Ready and
// its object is neither gone nor being deleted (the deletion handles it).
func (c *Controller) stillWanted(cluster string, t *copyTask) bool {
	if !c.members.Usable(cluster) {
		return false
	}
	fed, err := c.get(t.fed.GetNamespace(), t.fed.GetName())
	return err == nil && fed.GetDeletionTimestamp() == nil
}

// finishLocked drops a copy's task. Called with w.mu held.
func (w *copyWork) finishLocked(objKey, cluster string) {
	delete(w.pending[objKey], cluster)
	if len(w.pending[objKey]) == 0 {
		delete(w.pending, objKey)
	}
}

// settledLocked reports whether every copy of an object was written or
// failed (settled), and whether every one was written (done). Called with
// w.mu held.
func (w *copyWork) settledLocked(objKey string) (settled, done bool) {
	for _, t := range w.pending[objKey] {
		if t.failure == "" || t.running {
			return false, false
		}
	}
	return true, len(w.pending[objKey]) == 0
}

// dropCopies forgets the tasks of an object that is being deleted, and
// reports whether one of them is running (the deletion must then wait for
// it, or the copy it writes would outlive the object).
func (c *Controller) dropCopies(objKey string) (running bool) {
	w := c.copies
	w.mu.Lock()
	defer w.mu.Unlock()
	for cluster, t := range w.pending[objKey] {
		if t.running {
			running = true
			continue
		}
		w.finishLocked(objKey, cluster)
	}
	if !running {
		delete(w.written, objKey)
		delete(w.statusBehind, objKey)
	}
	return running
}

// hasTask reports whether a copy has a task pending.
func (c *Controller) hasTask(objKey, cluster string) bool {
	c.copies.mu.Lock()
	defer c.copies.mu.Unlock()
	return c.copies.pending[objKey][cluster] != nil
}

// copyState returns, for an object, whether copies are still being
// written and the failures of those that could not be. A type with status
// has it written again once they are.
func (c *Controller) copyState(objKey string) (inFlight bool, failures []string) {
	w := c.copies
	w.mu.Lock()
	defer w.mu.Unlock()
	settled, _ := w.settledLocked(objKey)
	if !settled && c.adapter.Status != nil {
		w.statusBehind[objKey] = true
	}
	for _, t := range w.pending[objKey] {
		if t.failure != "" {
			failures = append(failures, t.failure)
		}
	}
	slices.Sort(failures)
	return !settled, failures
}

// recordCopies records one event per kind of write of an object, naming
// its clusters: "Created ConfigMap ns/a in clusters c1, c2". One event per
// object rather than per copy keeps the federation apiserver's writes from
// growing with the number of members.
func (c *Controller) recordCopies(obj *unstructured.Unstructured, events []copyEvent) {
	if obj == nil || len(events) == 0 {
		return
	}
	type kind struct{ reason, verb, suffix string }
	clusters := map[kind][]string{}
	for _, e := range events {
		k := kind{e.reason, e.verb, e.suffix}
		if !slices.Contains(clusters[k], e.cluster) {
			clusters[k] = append(clusters[k], e.cluster)
		}
	}
	what := fmt.Sprintf("%s %s", c.adapter.Kind, key(obj.GetNamespace(), obj.GetName()))
	for _, k := range slices.SortedFunc(maps.Keys(clusters), func(a, b kind) int {
		return strings.Compare(a.reason+a.verb+a.suffix, b.reason+b.verb+b.suffix)
	}) {
		names := clusters[k]
		slices.Sort(names)
		where := "cluster " + names[0]
		if len(names) > 1 {
			where = "clusters " + strings.Join(names, ", ")
		}
		c.recorder.Eventf(obj, corev1.EventTypeNormal, k.reason, "%s %s in %s%s", k.verb, what, where, k.suffix)
	}
}
