package queues

import (
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"
)

// Handlers are what the queues call; they do the I/O.
type Handlers struct {
	// Wanted reports whether a task should still run when a worker takes
	// it; a task no longer wanted is dropped as done.
	Wanted func(cluster string, t Task) bool
	// Write makes the member hold what the task says, and returns the write
	// to tell of (nil when none was needed).
	Write func(ctx context.Context, cluster string, t Task) (*Event, error)
	// Done is told the end of every write, after the queues' state has
	// been updated.
	Done func(Done)
	// Failed counts a failed write (metrics).
	Failed func(cluster string)
}

// Done is the end of one write.
type Done struct {
	ObjKey, Cluster string
	Task            Task
	Err             error
	// HadFailure: the write had failed before this attempt.
	HadFailure bool
	// EventWhileRunning: a member event of the copy came while it was
	// written, and was taken for the write's echo; whether it was is known
	// only now.
	EventWhileRunning bool
	// Settled: every write of the object has ended, written or failed.
	// Obj and Events are then the writes not yet told, if any.
	Settled bool
	Obj     *unstructured.Unstructured
	Events  []Event
	// AllWritten: settled, and no write of the object is left.
	AllWritten bool
	// StatusBehind: the object's status was written while its copies were
	// being written (see State).
	StatusBehind bool
}

// ClusterTask is a task for one cluster.
type ClusterTask struct {
	Cluster string
	Task
}

// Queues are the per-cluster queues of one controller's member writes.
type Queues struct {
	// name prefixes the queues' metric names: "<name>_<cluster>".
	name string
	// what names the writes in logs: "Writing a federated ConfigMap".
	what       string
	workers    int
	newLimiter func() workqueue.TypedRateLimiter[string]
	handlers   Handlers

	mu sync.Mutex
	// ctx runs the clusters' workers; nil until Run.
	ctx    context.Context
	queues map[string]*clusterQueue
	// running counts the workers; stopped, set by Wait, starts no more.
	running sync.WaitGroup
	stopped bool
	// pending holds, by object key and cluster, the tasks to run.
	pending map[string]map[string]*task
	// statusBehind holds the objects whose status was last written while
	// their copies were being written.
	statusBehind map[string]bool
	// written holds an object's writes until its copies are all written,
	// to tell of them in one event.
	written map[string]*objectWrites
	// released holds, by object key, the clusters whose copy a Delete or
	// Orphan task let go.
	released map[string]map[string]bool
}

// objectWrites are an object's member writes not yet told in an event.
type objectWrites struct {
	obj    *unstructured.Unstructured
	events []Event
}

// New returns the queues of one controller; name prefixes their metrics,
// what names their writes in logs, workers run per cluster, and newLimiter
// makes each queue's rate limiter.
func New(name, what string, workers int, newLimiter func() workqueue.TypedRateLimiter[string], h Handlers) *Queues {
	return &Queues{
		name:         name,
		what:         what,
		workers:      max(workers, 1),
		newLimiter:   newLimiter,
		handlers:     h,
		queues:       map[string]*clusterQueue{},
		pending:      map[string]map[string]*task{},
		statusBehind: map[string]bool{},
		written:      map[string]*objectWrites{},
		released:     map[string]map[string]bool{},
	}
}

// Run lets the clusters' queues start their workers (see clusterQueue)
// and shuts the queues down when ctx ends.
func (q *Queues) Run(ctx context.Context) {
	q.mu.Lock()
	q.ctx = ctx
	for _, cq := range q.queues {
		q.runLocked(cq)
	}
	q.mu.Unlock()
	go func() {
		<-ctx.Done()
		q.mu.Lock()
		defer q.mu.Unlock()
		for _, cq := range q.queues {
			cq.ShutDown()
		}
	}()
}

// Wait returns once the workers have returned, after the context of Run
// ended: no write is under way any more.
func (q *Queues) Wait() {
	q.mu.Lock()
	q.stopped = true
	q.mu.Unlock()
	q.running.Wait()
}

// runLocked gives a queue its context and starts workers for what it holds.
func (q *Queues) runLocked(cq *clusterQueue) {
	cq.ctx, cq.cancel = context.WithCancel(q.ctx)
	for q.startWorkerLocked(cq) {
	}
}

// queueLocked returns the cluster's queue, made on first use.
func (q *Queues) queueLocked(cluster string) *clusterQueue {
	cq, ok := q.queues[cluster]
	if !ok {
		cq = q.newClusterQueue(cluster)
		q.queues[cluster] = cq
		if q.ctx != nil {
			q.runLocked(cq)
		}
	}
	return cq
}

// Dispatch hands an object's tasks over to their clusters' queues, all
// registered at once so that no copy is written (and told in an event)
// before its object's other copies are known to be pending. A task for the
// same copy that has not run yet is replaced; one that is running is
// followed by the new one. A task waiting out a failure's backoff keeps
// waiting unless what it should do changed.
func (q *Queues) Dispatch(objKey string, tasks []ClusterTask) {
	if len(tasks) == 0 {
		return
	}
	var toAdd []*clusterQueue
	q.mu.Lock()
	byCluster := q.pending[objKey]
	if byCluster == nil {
		byCluster = map[string]*task{}
		q.pending[objKey] = byCluster
	}
	for _, ct := range tasks {
		old := byCluster[ct.Cluster]
		if old != nil && !old.running && old.same(ct.Task) {
			// The same write, still waiting: it goes as it is, on the
			// newer judgment.
			old.Task = ct.Task
			continue
		}
		t := &task{Task: ct.Task}
		if old != nil {
			t.running, t.failure = old.running, old.failure
		}
		byCluster[ct.Cluster] = t
		if old == nil || !old.same(ct.Task) {
			toAdd = append(toAdd, q.queueLocked(ct.Cluster))
		}
	}
	q.mu.Unlock()
	for _, queue := range toAdd {
		queue.Add(objKey)
	}
}

// process runs the pending task of one copy.
func (q *Queues) process(ctx context.Context, cluster, objKey string) error {
	q.mu.Lock()
	t := q.pending[objKey][cluster]
	if t == nil {
		q.mu.Unlock()
		return nil
	}
	t.running = true
	hadFailure := t.failure != ""
	q.mu.Unlock()

	var (
		ev  *Event
		err error
	)
	// A task not wanted (its cluster is away) is dropped unwritten: a
	// release that did not run let nothing go, and the deletion asks again
	// when the cluster is back.
	ran := q.handlers.Wanted(cluster, t.Task)
	if ran {
		ev, err = q.handlers.Write(ctx, cluster, t.Task)
	}

	q.mu.Lock()
	cur := q.pending[objKey][cluster]
	if cur != nil {
		cur.running = false
	}
	if err != nil {
		if q.handlers.Failed != nil {
			q.handlers.Failed(cluster)
		}
		if cur != nil {
			cur.failure = err.Error()
		}
	}
	if ev != nil {
		ev.Cluster = cluster
		if q.written[objKey] == nil {
			q.written[objKey] = &objectWrites{}
		}
		q.written[objKey].obj = t.Fed
		q.written[objKey].events = append(q.written[objKey].events, *ev)
	}
	if ran && err == nil && t.Action.Releases() {
		if q.released[objKey] == nil {
			q.released[objKey] = map[string]bool{}
		}
		q.released[objKey][cluster] = true
	}
	newer := cur != nil && cur != t
	if cur == t && err == nil {
		q.finishLocked(objKey, cluster)
	}
	d := Done{ObjKey: objKey, Cluster: cluster, Task: t.Task, Err: err, HadFailure: hadFailure, EventWhileRunning: t.eventWhileRunning}
	d.Settled, d.AllWritten = q.settledLocked(objKey)
	if d.Settled {
		if w := q.written[objKey]; w != nil {
			d.Obj, d.Events = w.obj, w.events
			// Its status was written while we wrote: the member events of
			// our writes may have come first.
			d.StatusBehind = q.statusBehind[objKey]
		}
		delete(q.written, objKey)
		delete(q.statusBehind, objKey)
	}
	queue, queued := q.queues[cluster]
	q.mu.Unlock()

	q.handlers.Done(d)
	if newer && queued {
		queue.Add(objKey)
	}
	// A failure is retried with the copy's own backoff.
	return err
}

// Writing reports whether the copy of objKey in cluster is being written,
// and if so notes that an event of it came meanwhile.
func (q *Queues) Writing(cluster, objKey string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	t := q.pending[objKey][cluster]
	if t == nil || !t.running {
		return false
	}
	t.eventWhileRunning = true
	return true
}

// ForgetClusters stops the queues and drops the tasks of the clusters that
// left the federation (not joined); a cluster that is only not Ready keeps
// its queue, and its tasks are dropped as they come up.
func (q *Queues) ForgetClusters(joined func(cluster string) bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for cluster, cq := range q.queues {
		if joined(cluster) {
			continue
		}
		if cq.cancel != nil {
			cq.cancel()
		}
		cq.ShutDown()
		delete(q.queues, cluster)
		for objKey, tasks := range q.pending {
			if t := tasks[cluster]; t != nil && !t.running {
				q.finishLocked(objKey, cluster)
			}
		}
	}
}

// finishLocked drops a copy's task.
func (q *Queues) finishLocked(objKey, cluster string) {
	delete(q.pending[objKey], cluster)
	if len(q.pending[objKey]) == 0 {
		delete(q.pending, objKey)
	}
}

// settledLocked reports whether every task of an object ended, written or
// failed (settled), and whether none is left (allWritten).
func (q *Queues) settledLocked(objKey string) (settled, allWritten bool) {
	for _, t := range q.pending[objKey] {
		if t.failure == "" || t.running {
			return false, false
		}
	}
	return true, len(q.pending[objKey]) == 0
}

// Forget drops what is known of an object that is gone: its tasks that are
// not running, and its writes not yet told.
func (q *Queues) Forget(objKey string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for cluster, t := range q.pending[objKey] {
		if !t.running {
			q.finishLocked(objKey, cluster)
		}
	}
	delete(q.written, objKey)
	delete(q.statusBehind, objKey)
	delete(q.released, objKey)
}

// DropWrites drops an object's tasks that would write its copies (Apply,
// Unplace) and are not running: the object is being deleted.
func (q *Queues) DropWrites(objKey string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for cluster, t := range q.pending[objKey] {
		if !t.running && !t.Action.Releases() {
			q.finishLocked(objKey, cluster)
		}
	}
}

// Has reports whether a copy has a task pending.
func (q *Queues) Has(objKey, cluster string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending[objKey][cluster] != nil
}

// Released reports whether a Delete or Orphan task let the copy of objKey
// in cluster go.
func (q *Queues) Released(objKey, cluster string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.released[objKey][cluster]
}

// State returns, for an object, whether tasks are still running or
// waiting, and the failures of those that could not be done. tracksStatus
// notes that its status is being written meanwhile (Done.StatusBehind).
func (q *Queues) State(objKey string, tracksStatus bool) (inFlight bool, failures []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	settled, _ := q.settledLocked(objKey)
	if !settled && tracksStatus {
		q.statusBehind[objKey] = true
	}
	for _, t := range q.pending[objKey] {
		if t.failure != "" {
			failures = append(failures, t.failure)
		}
	}
	slices.Sort(failures)
	return !settled, failures
}

// Idle reports whether no task is pending.
func (q *Queues) Idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending) == 0
}

// Clusters are the clusters that have a queue.
func (q *Queues) Clusters() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []string
	for cluster := range q.queues {
		out = append(out, cluster)
	}
	slices.Sort(out)
	return out
}

// Len is the number of objects queued for a cluster.
func (q *Queues) Len(cluster string) int {
	q.mu.Lock()
	queue := q.queues[cluster]
	q.mu.Unlock()
	if queue == nil {
		return 0
	}
	return queue.Len()
}

// Drain runs what is queued for a cluster in the calling goroutine, as a
// worker would, and returns the writes' errors; for tests, whose queues
// have no workers running (no Run).
func (q *Queues) Drain(ctx context.Context, cluster string) []error {
	q.mu.Lock()
	queue := q.queues[cluster]
	q.mu.Unlock()
	var errs []error
	for queue != nil && queue.Len() > 0 {
		objKey, _ := queue.Get()
		if err := q.process(ctx, cluster, objKey); err != nil {
			errs = append(errs, err)
		}
		queue.Done(objKey)
	}
	return errs
}
