package propagation

import (
	"sync"
	"time"

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/syncmetrics"
)

// initialSync tells when every federated object found at start has been
// reconciled with each of its copies found in sync or written: the gauge
// federation_sync_initial_pending of its type falls to 0. After a restart
// with nothing changed, that is when every copy has been verified.
type initialSync struct {
	// typ labels the gauge.
	typ string
	mu  sync.Mutex
	// pending holds the keys not yet reconciled; nil before start.
	pending map[string]bool
	// later holds pending keys whose reconcile asked to look again after a
	// while (recheck): the next end of a reconcile of theirs does not count.
	later map[string]bool
}

func newInitialSync(typ string) *initialSync {
	return &initialSync{typ: typ, later: map[string]bool{}}
}

// start notes the keys in the cache once it synced, before any reconcile.
func (s *initialSync) start(keys []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = make(map[string]bool, len(keys))
	for _, k := range keys {
		s.pending[k] = true
	}
	syncmetrics.InitialPending.WithLabelValues(s.typ).Set(float64(len(s.pending)))
}

// recheck notes that a reconcile of key left it to be looked at again.
// Only a key still pending is marked: the marks matter to nothing else, and
// those of objects deleted meanwhile would otherwise stay for good.
func (s *initialSync) recheck(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending[key] {
		s.later[key] = true
	}
}

// settled notes that a reconcile of key ended with nothing left to write
// and no failure.
func (s *initialSync) settled(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.later[key] {
		delete(s.later, key)
		return
	}
	if !s.pending[key] {
		return
	}
	delete(s.pending, key)
	syncmetrics.InitialPending.WithLabelValues(s.typ).Set(float64(len(s.pending)))
}

// settleRecheck is how soon an object is looked at again while the
// members' caches settle (membercluster.Manager.Settled).
const settleRecheck = time.Second

// recheck looks at key again after a while; its initial reconcile is not
// over until then.
func (c *Controller) recheck(key string, after time.Duration) {
	c.initial.recheck(key)
	c.queue.AddAfter(key, after)
}

// reconciled is told of every reconcile that returned no error: it counts
// for the initial sync when no write of the object is pending or failed
// (else memberWritten tells once they are written).
func (c *Controller) reconciled(key string) {
	if inFlight, failures := c.w.State(key, false); !inFlight && len(failures) == 0 {
		c.initial.settled(key)
	}
}
