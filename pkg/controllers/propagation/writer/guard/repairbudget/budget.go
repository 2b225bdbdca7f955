// Package repairbudget bounds how often the federation repairs one member
// copy: puts back what the member changed or deleted while what the
// federation sends stayed the same. A member controller that fights the
// federation (or a tenant's object made to provoke one) would otherwise
// cost member writes without end. Repairs of a copy back off
// exponentially, and stop after a bound within a window until the
// federated object changes; the caller reports that as a drift conflict.
// Pure logic: the caller passes the time.
package repairbudget

import (
	"sync"
	"time"
)

// Defaults: 5 repairs of one copy in 10 minutes, 1s, 2s, 4s, 8s apart.
const (
	DefaultMax    = 5
	DefaultWindow = 10 * time.Minute
	DefaultFirst  = time.Second
)

// Budget holds the repairs of every copy, by a key the caller chooses
// (cluster and object). Safe for concurrent use.
type Budget struct {
	// Max repairs of one copy within Window; the first backoff is First,
	// doubled after each repair.
	Max    int
	Window time.Duration
	First  time.Duration

	mu     sync.Mutex
	copies map[string]*repairs
}

// repairs are a copy's repairs for one desired hash.
type repairs struct {
	hash  string
	times []time.Time
	// told: the exhaustion was reported.
	told bool
}

// Verdict is the answer to a repair asked for.
type Verdict struct {
	// Allowed: repair now (it is counted).
	Allowed bool
	// Wait is how long until the next repair may be tried.
	Wait time.Duration
	// Exhausted: Max repairs in Window; FirstExhausted the first answer
	// saying so since the copy last changed, to report once.
	Exhausted, FirstExhausted bool
	// Repairs made in the window.
	Repairs int
}

// New returns a budget with the defaults.
func New() *Budget {
	return &Budget{Max: DefaultMax, Window: DefaultWindow, First: DefaultFirst}
}

// Take asks for one repair of copy key, which should hold hash, at now. A
// new hash (the federated object changed) starts the copy's budget anew.
func (b *Budget) Take(key, hash string, now time.Time) Verdict {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.copies == nil {
		b.copies = map[string]*repairs{}
	}
	r := b.copies[key]
	if r == nil || r.hash != hash {
		r = &repairs{hash: hash}
		b.copies[key] = r
	}
	r.dropBefore(now.Add(-b.Window))
	n := len(r.times)
	if n >= b.Max {
		first := !r.told
		r.told = true
		return Verdict{Exhausted: true, FirstExhausted: first, Wait: r.times[0].Add(b.Window).Sub(now), Repairs: n}
	}
	if n > 0 {
		if next := r.times[n-1].Add(b.First << (n - 1)); now.Before(next) {
			return Verdict{Wait: next.Sub(now), Repairs: n}
		}
	}
	r.times = append(r.times, now)
	r.told = false
	return Verdict{Allowed: true, Repairs: n + 1}
}

// Forget drops what is known of the copies whose keys match (their
// object is gone).
func (b *Budget) Forget(match func(key string) bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.copies {
		if match(k) {
			delete(b.copies, k)
		}
	}
}

// dropBefore forgets repairs older than t.
func (r *repairs) dropBefore(t time.Time) {
	i := 0
	for i < len(r.times) && r.times[i].Before(t) {
		i++
	}
	r.times = r.times[i:]
}
