package queues

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/poll"
)

// activeWorkers is how many workers cluster's queue runs.
func (q *Queues) activeWorkers(cluster string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if cq := q.queues[cluster]; cq != nil {
		return cq.active
	}
	return 0
}

// Workers run while a queue has keys, never more than asked for, and
// none is left once it is empty; keys added later, and retries added by
// the delaying queue when their wait is over, start workers again.
func TestWorkersRunOnlyWhileTheirQueueHasKeys(t *testing.T) {
	r := newRecorder()
	var mu sync.Mutex
	running, most := 0, 0
	release := make(chan struct{})
	r.during = func(string, Task) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		<-release
		mu.Lock()
		running--
		mu.Unlock()
	}
	const workers = 3
	q := newQueues(r, workers)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q.Run(ctx)

	for i := range 10 {
		name := fmt.Sprintf("o%d", i)
		q.Dispatch("ns/"+name, []ClusterTask{apply("c1", name, "h")})
	}
	require.NoError(t, poll.Until(ctx, 10*time.Second, "every worker writing", func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if running != workers {
			return fmt.Errorf("%d writing", running)
		}
		return nil
	}))
	assert.Equal(t, workers, q.activeWorkers("c1"))
	close(release)
	idle := func(what string) {
		t.Helper()
		require.NoError(t, poll.Until(ctx, 10*time.Second, what, func(context.Context) error {
			if !q.Idle() || q.activeWorkers("c1") != 0 {
				return fmt.Errorf("idle %v, %d workers", q.Idle(), q.activeWorkers("c1"))
			}
			return nil
		}))
	}
	idle("every copy written and no worker left")
	mu.Lock()
	assert.Equal(t, workers, most, "writes at once")
	mu.Unlock()

	// A failed write is retried after its backoff, by a worker started
	// for it: the queue was idle meanwhile.
	r.mu.Lock()
	r.failWith["h2"] = errors.New("member says no")
	r.mu.Unlock()
	q.Dispatch("ns/o0", []ClusterTask{apply("c1", "o0", "h2")})
	require.NoError(t, poll.Until(ctx, 10*time.Second, "the write failed", func(context.Context) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.failed) == 0 {
			return errors.New("not yet")
		}
		r.failWith = map[string]error{}
		return nil
	}))
	idle("the failed write retried and done")
	assert.Equal(t, "c1/o0 0 h2", r.writes[len(r.writes)-1])
}
