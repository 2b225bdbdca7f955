package queues

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// Action is what a task does to a member's copy.
type Action int

const (
	// Apply makes the member hold the desired copy.
	Apply Action = iota
	// Unplace deletes the copy of a cluster no longer selected.
	Unplace
	// Delete deletes the copy of a federated object being deleted.
	Delete
	// Orphan leaves the copy of a federated object deleted with the orphan
	// policy to the member: the federation's label and hash come off.
	Orphan
)

// Releases reports whether the action lets the copy go because its
// federated object is being deleted.
func (a Action) Releases() bool { return a == Delete || a == Orphan }

// Task is what one member should be made to hold of a federated object.
type Task struct {
	Action Action
	// Fed is the federated object, Desired what the member is sent (Apply)
	// and Hash its hash.
	Fed, Desired *unstructured.Unstructured
	Hash         string
	// Basis is what the reconcile judged the copy on (plan.Basis); ""
	// when it was not judged (releases). InSync: it was judged in sync,
	// and the task is only to check what it names.
	Basis  string
	InSync bool
}

// same reports whether two tasks make the same write.
func (t Task) same(o Task) bool { return t.Action == o.Action && t.Hash == o.Hash }

// Event is one member write, told in the object's event once all of its
// copies are written.
type Event struct {
	Reason, Verb, Suffix string
	Cluster              string
}

// task is a Task in a queue.
type task struct {
	Task
	// running: a worker has taken it. A task replaced meanwhile is told
	// apart by identity and runs next.
	running bool
	// eventWhileRunning: a member event of the copy came while it was
	// being written (see Queues.Writing).
	eventWhileRunning bool
	// failure is the last error writing the copy, for the object's
	// Propagated condition; such a task waits out its backoff.
	failure string
}
