package memberevents

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var web = corev1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: "fed-web"}

func warning(uid, reason, message string, count int32, at time.Time) *memberEvent {
	return &memberEvent{UID: types.UID(uid), Namespace: "shop", InvolvedNamespace: "shop", Type: corev1.EventTypeWarning,
		Reason: reason, Message: message, Count: count, First: at, Last: at}
}

// federation plays the flush queue and the federation apiserver against a
// mirror: it writes what take hands out when it is due, and counts.
type federation struct {
	m      *mirror
	clock  *testingclock.FakeClock
	due    map[eventKey]time.Time
	events map[eventKey]corev1.Event
	writes int
}

func newFederation() *federation {
	c := testingclock.NewFakeClock(t0)
	return &federation{m: newMirror(c), clock: c, due: map[eventKey]time.Time{}, events: map[eventKey]corev1.Event{}}
}

func (f *federation) observe(fed corev1.ObjectReference, cluster string, ev *memberEvent) {
	if key, delay, ok := f.m.observe(fed, cluster, ev); ok {
		f.schedule(key, delay)
	}
	f.flush()
}

func (f *federation) schedule(key eventKey, delay time.Duration) {
	at := f.clock.Now().Add(delay)
	if have, ok := f.due[key]; !ok || at.Before(have) {
		f.due[key] = at
	}
}

// flush writes every event that is due, as the queue's workers would.
func (f *federation) flush() {
	for key, at := range f.due {
		if f.clock.Now().Before(at) {
			continue
		}
		delete(f.due, key)
		ev, create, wait, ok := f.m.take(key)
		if !ok {
			continue
		}
		if wait > 0 {
			f.schedule(key, wait)
			continue
		}
		_, exists := f.events[key]
		if create == exists {
			panic(fmt.Sprintf("create %v for an event that exists: %v", create, exists))
		}
		f.writes++
		f.events[key] = ev
		if again, ok := f.m.written(key, ev.Count); ok {
			f.schedule(key, again)
		}
	}
}

// wait lets d pass, flushing every second.
func (f *federation) wait(d time.Duration) {
	for end := f.clock.Now().Add(d); f.clock.Now().Before(end); {
		f.clock.Step(time.Second)
		f.flush()
	}
}

func TestAThousandIdenticalWarningsAreOneEventWrittenAFewTimes(t *testing.T) {
	f := newFederation()
	for i := range 1000 {
		f.clock.Step(5 * time.Millisecond)
		f.observe(web, "cluster2", warning(fmt.Sprintf("e%d", i), "FailedScheduling", "0/2 nodes are available", 1, f.clock.Now()))
	}
	f.wait(time.Minute)
	require.Len(t, f.events, 1, "one event at the federation")
	for _, ev := range f.events {
		assert.EqualValues(t, 1000, ev.Count, "counted like the members did")
		assert.Equal(t, "cluster2: 0/2 nodes are available", ev.Message)
		assert.Equal(t, web, ev.InvolvedObject)
		assert.Equal(t, corev1.EventSource{Component: Component, Host: "cluster2"}, ev.Source)
		assert.Equal(t, t0.Add(5*time.Millisecond), ev.FirstTimestamp.Time)
	}
	assert.LessOrEqual(t, f.writes, 3, "a create and a patch or two, not 1,000 writes")
	t.Logf("1,000 member warnings over 5 s: %d federation writes", f.writes)
}

func TestAMemberEventCountsOnlyWhatIsNew(t *testing.T) {
	f := newFederation()
	f.observe(web, "cluster1", warning("e1", "BackOff", "Back-off restarting failed container", 3, t0))
	f.observe(web, "cluster1", warning("e1", "BackOff", "Back-off restarting failed container", 3, t0))
	assert.True(t, f.m.known("cluster1", warning("e1", "BackOff", "", 3, t0)), "seen again, as after a relist")
	assert.False(t, f.m.known("cluster1", warning("e1", "BackOff", "", 4, t0)))
	f.wait(20 * time.Second)
	f.observe(web, "cluster1", warning("e1", "BackOff", "Back-off restarting failed container", 7, t0.Add(time.Minute)))
	f.observe(web, "cluster2", warning("e1", "BackOff", "Back-off restarting failed container", 2, t0))
	f.wait(20 * time.Second)
	require.Len(t, f.events, 2, "one event per cluster")
	counts := map[string]int32{}
	for _, ev := range f.events {
		counts[ev.Source.Host] = ev.Count
	}
	assert.Equal(t, map[string]int32{"cluster1": 7, "cluster2": 2}, counts)

	f.m.notOurs("cluster3", warning("x", "", "", 1, t0))
	assert.True(t, f.m.known("cluster3", warning("x", "", "", 100, t0)), "not ours, whatever its count")
}

func TestWritesAboutAnObjectFromAClusterHaveABudget(t *testing.T) {
	f := newFederation()
	for i := range 20 {
		f.observe(web, "cluster2", warning(fmt.Sprintf("e%d", i), fmt.Sprintf("Reason%d", i), "broken", 1, t0))
	}
	assert.Equal(t, objectClusterBurst, f.writes, "a burst at once")
	f.observe(web, "cluster3", warning("other", "Reason0", "broken", 1, t0))
	assert.Equal(t, objectClusterBurst+1, f.writes, "another cluster has its own budget")
	f.wait(objectClusterEvery)
	assert.Equal(t, objectClusterBurst+2, f.writes, "then one every %s", objectClusterEvery)
	f.wait(9 * objectClusterEvery)
	assert.Len(t, f.events, 21, "nothing is lost, only later")
}

func TestSimilarMessagesAreCombined(t *testing.T) {
	f := newFederation()
	for i := range 30 {
		f.observe(web, "cluster2", warning(fmt.Sprintf("e%d", i), "FailedCreate", fmt.Sprintf(`pods "web-%d" is forbidden: exceeded quota`, i), 1, t0))
	}
	f.wait(5 * time.Minute)
	assert.Len(t, f.events, aggregateMaxEvents, "9 events, then one that combines the rest")
	var total int32
	combined := 0
	for _, ev := range f.events {
		total += ev.Count
		if ev.Count > 1 {
			combined++
			assert.Equal(t, `(combined from similar events): cluster2: pods "web-29" is forbidden: exceeded quota`, ev.Message, "the latest message")
		}
	}
	assert.EqualValues(t, 30, total)
	assert.Equal(t, 1, combined)
}

func TestTheMirrorIsBoundedInMemory(t *testing.T) {
	m := newMirror(testingclock.NewFakeClock(t0))
	for i := range entriesSize + 500 {
		obj := web
		obj.Name, obj.UID = fmt.Sprintf("web-%d", i), types.UID(fmt.Sprintf("uid-%d", i))
		m.observe(obj, "cluster1", warning(fmt.Sprintf("e%d", i), "FailedScheduling", "no nodes", 1, t0))
	}
	assert.Equal(t, entriesSize, m.entries.Len())
	assert.LessOrEqual(t, m.seen.Len(), seenSize)
}

func TestAnEventWrittenBeforeARestartKeepsItsLargerCount(t *testing.T) {
	f := newFederation()
	f.observe(web, "cluster1", warning("e1", "FailedMount", "no volume", 5, t0))
	key := func() eventKey {
		for k := range f.events {
			return k
		}
		return eventKey{}
	}()
	again, more := f.m.written(key, 40)
	assert.False(t, more, "nothing more to write: %s", again)
	f.observe(web, "cluster1", warning("e1", "FailedMount", "no volume", 6, t0))
	f.wait(time.Minute)
	assert.EqualValues(t, 41, f.events[key].Count, "counted on from the federation's count")
}

func TestNamesAreStableAndValid(t *testing.T) {
	assert.Equal(t, eventName("web", "k"), eventName("web", "k"))
	assert.NotEqual(t, eventName("web", "k"), eventName("web", "j"))
	long := eventName(string(make([]byte, 300)), "k")
	assert.LessOrEqual(t, len(long), 253)
	assert.Equal(t, "héllo", truncate("héllo", 6))
	assert.Equal(t, "h", truncate("hé", 2), "never half a rune")
}
