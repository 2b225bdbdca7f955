package repairbudget

import (
	"sync"
	"time"
)

// Refused spaces out the retries of writes a member refuses (its policy
// or validation says no: the same write is refused again until the
// federated object or the member changes): 1s, 2s, 4s, ... up to Max
// apart, per copy, instead of the work queue's short backoff. A new hash
// starts over. Safe for concurrent use.
type Refused struct {
	// First is the first wait, Max the longest.
	First, Max time.Duration

	mu     sync.Mutex
	copies map[string]refusals
}

type refusals struct {
	hash string
	n    int
}

// NewRefused returns the retries of refused writes: 1s doubling to 5m.
func NewRefused() *Refused { return &Refused{First: time.Second, Max: 5 * time.Minute} }

// Next counts one more refusal of copy key's write of hash and returns how
// long to wait before trying it again.
func (r *Refused) Next(key, hash string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.copies == nil {
		r.copies = map[string]refusals{}
	}
	c := r.copies[key]
	if c.hash != hash {
		c = refusals{hash: hash}
	}
	wait := r.Max
	if c.n < 32 && r.First<<c.n < r.Max {
		wait = r.First << c.n
	}
	c.n++
	r.copies[key] = c
	return wait
}

// Forget drops the refusals of the copies whose keys match (written, or
// their object gone).
func (r *Refused) Forget(match func(key string) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.copies {
		if match(k) {
			delete(r.copies, k)
		}
	}
}
