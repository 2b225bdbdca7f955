package queues

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestWaitReturnsOnceTheWriteUnderWayEnded: after Run's context ends, Wait
// returns only once the write in hand has returned, and the writes still
// queued are not made.
func TestWaitReturnsOnceTheWriteUnderWayEnded(t *testing.T) {
	r := newRecorder()
	inWrite, release := make(chan struct{}), make(chan struct{})
	r.during = func(string, Task) {
		select {
		case inWrite <- struct{}{}:
			<-release
		default:
		}
	}
	q := newQueues(r, 1)
	ctx, cancel := context.WithCancel(context.Background())
	q.Run(ctx)
	q.Dispatch("ns/a", []ClusterTask{apply("c1", "a", "h")})
	<-inWrite
	q.Dispatch("ns/b", []ClusterTask{apply("c1", "b", "h")})
	cancel()
	waited := make(chan struct{})
	go func() { q.Wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("Wait returned while a write was under way")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return once the write had")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	assert.Equal(t, []string{"c1/a 0 h"}, r.writes, "b, queued after the end, is not written")
}
