package repairbudget

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRepairsBackOffThenStopUntilTheWindowPasses(t *testing.T) {
	b := New()
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	now := start
	var allowedAt []time.Duration
	exhaustedTold := 0
	// A member that changes the copy back every 100 ms for 2 minutes.
	for now.Before(start.Add(2 * time.Minute)) {
		v := b.Take("c1/ns/a", "h1", now)
		if v.Allowed {
			allowedAt = append(allowedAt, now.Sub(start))
		}
		if v.FirstExhausted {
			exhaustedTold++
		}
		now = now.Add(100 * time.Millisecond)
	}
	assert.Equal(t, []time.Duration{0, time.Second, 3 * time.Second, 7 * time.Second, 15 * time.Second}, allowedAt,
		"repairs 1s, 2s, 4s, 8s apart, then none")
	assert.Equal(t, 1, exhaustedTold, "the exhaustion is reported once")

	v := b.Take("c1/ns/a", "h1", now)
	require.True(t, v.Exhausted)
	assert.Equal(t, 8*time.Minute, v.Wait, "until the first repair leaves the window")
	assert.True(t, b.Take("c1/ns/a", "h1", start.Add(10*time.Minute+time.Millisecond)).Allowed, "the window passed")
}

func TestAChangedObjectStartsItsBudgetAnew(t *testing.T) {
	b := &Budget{Max: 2, Window: time.Minute, First: time.Second}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	require.True(t, b.Take("k", "h1", now).Allowed)
	require.True(t, b.Take("k", "h1", now.Add(time.Second)).Allowed)
	assert.True(t, b.Take("k", "h1", now.Add(2*time.Second)).Exhausted)
	assert.True(t, b.Take("k", "h2", now.Add(2*time.Second)).Allowed, "a new hash")
	assert.True(t, b.Take("other", "h1", now.Add(2*time.Second)).Allowed, "copies are budgeted apart")
	b.Forget(func(key string) bool { return key == "k" })
	assert.True(t, b.Take("k", "h2", now.Add(2*time.Second)).Allowed, "forgotten")
}

func TestWaitSaysWhenTheNextRepairMayRun(t *testing.T) {
	b := New()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	require.True(t, b.Take("k", "h", now).Allowed)
	v := b.Take("k", "h", now.Add(300*time.Millisecond))
	assert.False(t, v.Allowed)
	assert.False(t, v.Exhausted)
	assert.Equal(t, 700*time.Millisecond, v.Wait)
	assert.Equal(t, 1, v.Repairs)
}

func TestRefusedWritesAreTriedAgainLessAndLessOften(t *testing.T) {
	r := NewRefused()
	var waits []time.Duration
	for range 12 {
		waits = append(waits, r.Next("c1/ns/a", "h1"))
	}
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second,
		64 * time.Second, 128 * time.Second, 256 * time.Second, 5 * time.Minute, 5 * time.Minute, 5 * time.Minute}, waits)
	assert.Equal(t, time.Second, r.Next("c1/ns/a", "h2"), "a changed object starts over")
	r.Forget(func(k string) bool { return k == "c1/ns/a" })
	assert.Equal(t, time.Second, r.Next("c1/ns/a", "h2"), "forgotten once written")
}
