package queueworker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/util/workqueue"

	"github.com/federation-v1/federation/pkg/poll"
)

func TestRunRetriesFailuresAndForgetsSuccesses(t *testing.T) {
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, 10*time.Millisecond))
	var (
		mu        sync.Mutex
		attempts  = map[string]int{}
		failed    []string
		succeeded []string
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(context.Background(), queue, Handlers[string]{
			Sync: func(_ context.Context, key string) error {
				mu.Lock()
				defer mu.Unlock()
				attempts[key]++
				if key == "flaky" && attempts[key] < 3 {
					return errors.New("not yet")
				}
				return nil
			},
			Failed:    func(key string, _ error) { mu.Lock(); failed = append(failed, key); mu.Unlock() },
			Succeeded: func(key string) { mu.Lock(); succeeded = append(succeeded, key); mu.Unlock() },
			What:      "Testing", KeyName: "key",
		})
	}()
	queue.Add("flaky")
	queue.Add("fine")
	err := poll.Until(context.Background(), 5*time.Second, "both keys synced", func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if len(succeeded) < 2 {
			return errors.New("not yet")
		}
		return nil
	})
	assert.NoError(t, err)
	queue.ShutDown()
	<-done
	assert.Equal(t, map[string]int{"flaky": 3, "fine": 1}, attempts)
	assert.Equal(t, []string{"flaky", "flaky"}, failed)
	assert.ElementsMatch(t, []string{"flaky", "fine"}, succeeded)
	assert.Zero(t, queue.NumRequeues("flaky"), "forgotten once it succeeded")
}

// TestRunWorkersWaitsForTheKeyInHandAndDropsTheRest: once ctx ends,
// RunWorkers returns only after the sync under way has returned, and no
// queued key is synced any more.
func TestRunWorkersWaitsForTheKeyInHandAndDropsTheRest(t *testing.T) {
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	ctx, cancel := context.WithCancel(context.Background())
	inSync, release := make(chan string, 1), make(chan struct{})
	var (
		mu     sync.Mutex
		synced []string
	)
	h := Handlers[string]{What: "Testing", KeyName: "key", Sync: func(ctx context.Context, key string) error {
		if key == "slow" {
			inSync <- key
			<-release
		}
		mu.Lock()
		synced = append(synced, key)
		mu.Unlock()
		return ctx.Err()
	}}
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		RunWorkers(ctx, 1, queue, func(ctx context.Context) { Run(ctx, queue, h) })
	}()
	queue.Add("slow")
	<-inSync
	queue.Add("queued")
	cancel()
	select {
	case <-returned:
		t.Fatal("RunWorkers returned while a sync was under way")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("RunWorkers did not return once the sync in hand had")
	}
	assert.True(t, queue.ShuttingDown())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"slow"}, synced, "the key queued after the end is not synced")
}

// A conflict is retried like any failure, but not reported as an error:
// only the other failures reach utilruntime's error handlers.
func TestRunRetriesConflictsQuietly(t *testing.T) {
	var mu sync.Mutex
	var reported []string
	old := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(_ context.Context, err error, _ string, _ ...any) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, err.Error())
	}}
	t.Cleanup(func() { utilruntime.ErrorHandlers = old })

	queue := workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, 10*time.Millisecond))
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "a", errors.New("the object has been modified"))
	var attempts int
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(context.Background(), queue, Handlers[string]{
			Sync: func(context.Context, string) error {
				mu.Lock()
				defer mu.Unlock()
				attempts++
				switch attempts {
				case 1:
					return fmt.Errorf("updating a: %w", conflict)
				case 2:
					return errors.New("member unreachable")
				}
				return nil
			},
			What: "Testing", KeyName: "key",
		})
	}()
	queue.Add("a")
	require.NoError(t, poll.Until(context.Background(), 5*time.Second, "three attempts", func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if attempts < 3 {
			return errors.New("not yet")
		}
		return nil
	}))
	queue.ShutDown()
	<-done
	mu.Lock()
	defer mu.Unlock()
	assert.Len(t, reported, 1, "only the other failure is an error: %v", reported)
	assert.Contains(t, reported[0], "member unreachable")
}

// waitThen is work that may go on only after wait.
type waitThen struct{ wait time.Duration }

func (w waitThen) Error() string             { return "waiting " + w.wait.String() }
func (w waitThen) RetryAfter() time.Duration { return w.wait }

func TestRunWaitsWhatTheWorkAsksInsteadOfBackingOff(t *testing.T) {
	// A backoff far shorter than the wait: were it used, the key would be
	// synced many times within the wait.
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, time.Millisecond))
	const wait = 300 * time.Millisecond
	var (
		mu       sync.Mutex
		times    []time.Time
		failures int
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(context.Background(), queue, Handlers[string]{
			Sync: func(context.Context, string) error {
				mu.Lock()
				defer mu.Unlock()
				times = append(times, time.Now())
				if len(times) == 1 {
					return fmt.Errorf("budget: %w", waitThen{wait})
				}
				return nil
			},
			Failed: func(string, error) { mu.Lock(); failures++; mu.Unlock() },
			What:   "Testing", KeyName: "key",
		})
	}()
	queue.Add("k")
	require.NoError(t, poll.Until(context.Background(), 5*time.Second, "the key synced again", func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if len(times) < 2 {
			return errors.New("not yet")
		}
		return nil
	}))
	queue.ShutDown()
	<-done
	require.Len(t, times, 2, "synced twice: the wait, then done")
	assert.GreaterOrEqual(t, times[1].Sub(times[0]), wait)
	assert.Zero(t, failures, "a wait is not a failure")
}
