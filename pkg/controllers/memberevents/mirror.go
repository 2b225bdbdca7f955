package memberevents

import (
	"fmt"
	"hash/fnv"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"
)

// Budgets of what is kept and written at the federation.
const (
	// entriesSize bounds the federation events tracked; each holds at
	// most maxMessage of message.
	entriesSize = 2048
	// seenSize bounds the member events remembered (their count, so
	// that only what is new is added, and whether they are ours).
	seenSize = 8192
	// budgetsSize bounds the write budgets remembered, one per federated
	// object and cluster.
	budgetsSize = 4096
	// aggregateMaxEvents messages of one reason about one object from
	// one cluster within aggregateInterval, and the next are combined
	// into one event, as client-go's correlator does in a cluster.
	aggregateMaxEvents = 10
	aggregateInterval  = 10 * time.Minute
	// minUpdateInterval spaces the writes of one federation event: what
	// the member counts in between is added up and written once.
	minUpdateInterval = 10 * time.Second
	// objectClusterBurst writes about one federated object from one
	// cluster go at once, then one every objectClusterEvery.
	objectClusterBurst = 10
	objectClusterEvery = 30 * time.Second
	// globalWritesPerSecond and globalBurst bound every member event
	// write at the federation together.
	globalWritesPerSecond = 20
	globalBurst           = 100
	// maxMessage and maxReason bound what an event carries.
	maxMessage = 1024
	maxReason  = 128
)

// Component is the source of the events written at the federation; the
// source's host is the member cluster.
const Component = "federation-controller-manager"

// eventKey names one federation event.
type eventKey struct{ Namespace, Name string }

// entry is one federation event and what the members counted of it.
type entry struct {
	// event is what is written, without its count and times.
	event corev1.Event
	// budget names the write budget of its object and cluster.
	budget      string
	count       int32
	first, last time.Time
	// written is the count at the federation after the last write.
	written int32
	// writtenAt is when it was last written; stored says a write went.
	writtenAt time.Time
	stored    bool
}

// seenEvent is what is remembered of a member event.
type seenEvent struct {
	count int32
	// notOurs: it is about nothing the federation made.
	notOurs bool
}

// mirror deduplicates and counts the members' events by the federation
// event they become, and decides when each may be written: it is pure
// bookkeeping (no client), bounded in memory by its LRU caches.
type mirror struct {
	clock clock.PassiveClock

	mu sync.Mutex
	// aggregator combines similar messages (client-go's).
	aggregator *record.EventAggregator
	entries    *lru.Cache
	seen       *lru.Cache
	budgets    *lru.Cache
	global     *rate.Limiter
}

func newMirror(c clock.PassiveClock) *mirror {
	return &mirror{
		clock: c,
		aggregator: record.NewEventAggregator(entriesSize, record.EventAggregatorByReasonFunc, record.EventAggregatorByReasonMessageFunc,
			aggregateMaxEvents, int(aggregateInterval.Seconds()), c),
		entries: lru.New(entriesSize),
		seen:    lru.New(seenSize),
		budgets: lru.New(budgetsSize),
		global:  rate.NewLimiter(globalWritesPerSecond, globalBurst),
	}
}

// known reports whether a member event brings nothing new: it was found
// not ours, or its count was already added.
func (m *mirror) known(cluster string, ev *memberEvent) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.seen.Get(seenKey(cluster, ev))
	s, _ := v.(seenEvent)
	return ok && (s.notOurs || ev.Count <= s.count)
}

// notOurs remembers a member event that is about nothing the federation
// made.
func (m *mirror) notOurs(cluster string, ev *memberEvent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen.Add(seenKey(cluster, ev), seenEvent{notOurs: true})
}

func seenKey(cluster string, ev *memberEvent) string { return cluster + "/" + string(ev.UID) }

// observe adds a member event about the federated object fed to the
// federation event it becomes. It returns that event's key and when it may
// be written, or false when the member event brings nothing new.
func (m *mirror) observe(fed corev1.ObjectReference, cluster string, ev *memberEvent) (eventKey, time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	sk := seenKey(cluster, ev)
	v, _ := m.seen.Get(sk)
	prev, _ := v.(seenEvent)
	added := ev.Count - prev.count
	if added <= 0 {
		return eventKey{}, 0, false
	}
	m.seen.Add(sk, seenEvent{count: ev.Count})

	candidate := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: fed.Namespace},
		InvolvedObject: fed,
		Type:           ev.Type,
		Reason:         truncate(ev.Reason, maxReason),
		Message:        truncate(cluster+": "+ev.Message, maxMessage),
		Source:         corev1.EventSource{Component: Component, Host: cluster},
	}
	aggregated, correlation := m.aggregator.EventAggregate(candidate)
	key := eventKey{Namespace: fed.Namespace, Name: eventName(fed.Name, correlation)}
	var e *entry
	if v, ok := m.entries.Get(key); ok {
		e = v.(*entry)
	} else {
		e = &entry{budget: string(fed.UID) + "/" + cluster, event: *candidate}
		e.event.Name = key.Name
		m.entries.Add(key, e)
	}
	// A combined event says the latest message.
	e.event.Message = truncate(aggregated.Message, maxMessage)
	e.count += added
	last := ev.Last
	if last.IsZero() {
		last = now
	}
	first := ev.First
	if first.IsZero() {
		first = last
	}
	if e.first.IsZero() || first.Before(e.first) {
		e.first = first
	}
	if last.After(e.last) {
		e.last = last
	}
	return key, m.spacing(e, now), true
}

// spacing is how long a federation event waits for its next write.
func (m *mirror) spacing(e *entry, now time.Time) time.Duration {
	if !e.stored {
		return 0
	}
	return max(0, e.writtenAt.Add(minUpdateInterval).Sub(now))
}

// take returns the federation event of key to write now, with its count
// and times, and whether it is new (a create); or how long to wait for
// the budgets; ok is false when there is nothing to write.
func (m *mirror) take(key eventKey) (ev corev1.Event, create bool, wait time.Duration, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, found := m.entries.Get(key)
	if !found {
		return corev1.Event{}, false, 0, false
	}
	e := v.(*entry)
	if e.stored && e.count <= e.written {
		return corev1.Event{}, false, 0, false
	}
	now := m.clock.Now()
	if d := m.spacing(e, now); d > 0 {
		return corev1.Event{}, false, d, true
	}
	var budget *rate.Limiter
	if b, ok := m.budgets.Get(e.budget); ok {
		budget = b.(*rate.Limiter)
	} else {
		budget = rate.NewLimiter(rate.Every(objectClusterEvery), objectClusterBurst)
		m.budgets.Add(e.budget, budget)
	}
	own := budget.ReserveN(now, 1)
	if d := own.DelayFrom(now); d > 0 {
		own.CancelAt(now)
		return corev1.Event{}, false, d, true
	}
	all := m.global.ReserveN(now, 1)
	if d := all.DelayFrom(now); d > 0 {
		all.CancelAt(now)
		own.CancelAt(now)
		return corev1.Event{}, false, d, true
	}
	ev = *e.event.DeepCopy()
	ev.Count = e.count
	ev.FirstTimestamp = metav1.NewTime(e.first)
	ev.LastTimestamp = metav1.NewTime(e.last)
	return ev, !e.stored, 0, true
}

// written records that the federation now holds count for key. It
// returns when to write again if the members counted more meanwhile.
func (m *mirror) written(key eventKey, count int32) (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, found := m.entries.Get(key)
	if !found {
		return 0, false
	}
	e := v.(*entry)
	e.stored, e.writtenAt, e.written = true, m.clock.Now(), count
	// An event written before (by a controller manager before a restart)
	// may have counted more than this one has seen.
	e.count = max(e.count, count)
	if e.count <= e.written {
		return 0, false
	}
	return minUpdateInterval, true
}

// eventName is the federation event's name: the object's, and a hash of
// what makes the event one (its correlation key), so that a controller
// manager that restarts finds the events it wrote.
func eventName(object, correlation string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(correlation))
	if len(object) > 200 {
		object = object[:200]
	}
	return fmt.Sprintf("%s.%016x", object, h.Sum64())
}

// truncate cuts s to at most n bytes of valid UTF-8.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
