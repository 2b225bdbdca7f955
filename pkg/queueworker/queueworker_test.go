package queueworker

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
