package writer

import (
	"sync"
	"time"

	"github.com/federation-v1/federation/pkg/controllers/propagation/writer/internal/queues"
)

// Outcome is what the engine must do after a write: the writer never calls
// into it, it queues outcomes, which the engine takes (Ready, Take) in
// order. They are not merged: an AllWritten taken after a newer change was
// seen would time that change wrongly.
type Outcome struct {
	ObjKey string
	// AllWritten: every write of the object has ended and none is left
	// (its propagation is timed, and it counts for the initial sync).
	AllWritten bool
	// Requeue: reconcile the object again (its Propagated condition must
	// change, its deletion can go on, or an event taken for our write's
	// echo was somebody else's change).
	Requeue bool
	// RecheckAfter: reconcile it again after this long (a removal our
	// caches asked for that live reads kept: unplace.go).
	RecheckAfter time.Duration
}

// outcomes is a FIFO of outcomes with a signal.
type outcomes struct {
	mu    sync.Mutex
	queue []Outcome
	// ready holds a signal while the queue may be non-empty.
	ready chan struct{}
}

func (o *outcomes) add(out Outcome) {
	o.mu.Lock()
	o.queue = append(o.queue, out)
	o.mu.Unlock()
	select {
	case o.ready <- struct{}{}:
	default:
	}
}

// Ready is signalled when outcomes were added since the last Take.
func (w *Writer) Ready() <-chan struct{} { return w.outcomes.ready }

// Take returns the outcomes queued, oldest first, and empties the queue.
func (w *Writer) Take() []Outcome {
	w.outcomes.mu.Lock()
	defer w.outcomes.mu.Unlock()
	out := w.outcomes.queue
	w.outcomes.queue = nil
	return out
}

// written follows up the end of a member write: the object's event once
// its copies are written, and what the engine must do (Outcome).
func (w *Writer) written(d queues.Done) {
	if d.Settled {
		w.recordCopies(d.Obj, d.Events)
	}
	out := Outcome{ObjKey: d.ObjKey, AllWritten: d.AllWritten}
	switch {
	case d.Settled && (d.Err != nil || d.HadFailure || d.StatusBehind || d.Task.Action.Releases()):
		// (Otherwise the writes of a type with status bring the object
		// back with their members' watch events.)
		out.Requeue = true
	case d.EventWhileRunning && !w.holdsOurWrite(d.Cluster, d.ObjKey):
		out.Requeue = true
	}
	if out.AllWritten || out.Requeue {
		w.outcomes.add(out)
	}
}
