package propagation

import (
	"sync"
	"time"

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/syncmetrics"
)

// changeTimes hold when a change of each federated object was seen, for
// the propagation latency metric.
type changeTimes struct {
	// typ labels the metric.
	typ string
	mu  sync.Mutex
	at  map[string]time.Time
}

func newChangeTimes(typ string) *changeTimes {
	return &changeTimes{typ: typ, at: map[string]time.Time{}}
}

// seen notes a change of objKey, unless an earlier one is still pending.
func (t *changeTimes) seen(objKey string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.at[objKey]; !ok {
		t.at[objKey] = time.Now()
	}
}

// propagated records the time from the change to its last member write.
func (t *changeTimes) propagated(objKey string) {
	t.mu.Lock()
	at, ok := t.at[objKey]
	delete(t.at, objKey)
	t.mu.Unlock()
	if ok {
		syncmetrics.Latency.WithLabelValues(t.typ).Observe(time.Since(at).Seconds())
	}
}

// forget drops the change of an object that is gone.
func (t *changeTimes) forget(objKey string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.at, objKey)
}
