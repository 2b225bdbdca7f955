package poll

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUntil(t *testing.T) {
	t.Run("returns once the check passes", func(t *testing.T) {
		calls := 0
		err := Until(context.Background(), time.Second, "third call", func(context.Context) error {
			calls++
			if calls < 3 {
				return errors.New("not yet")
			}
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, 3, calls)
	})
	t.Run("times out naming what it waited for and the last failure", func(t *testing.T) {
		err := Until(context.Background(), 3*Interval, "the moon", func(context.Context) error {
			return errors.New("still night")
		})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "waiting for the moon")
		assert.Contains(t, err.Error(), "still night")
	})
	t.Run("an attempt cut short by the deadline does not hide the one before it", func(t *testing.T) {
		err := Until(context.Background(), 3*Interval, "a slow command", func(ctx context.Context) error {
			if _, cut := ctx.Deadline(); cut && time.Until(mustDeadline(ctx)) > Interval/2 {
				return errors.New("it is 10 3")
			}
			<-ctx.Done()
			return ctx.Err()
		})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "it is 10 3")
		assert.NotContains(t, err.Error(), "deadline exceeded")
	})
	t.Run("gives up at once on Abort", func(t *testing.T) {
		calls := 0
		start := time.Now()
		err := Until(context.Background(), time.Minute, "a dead process", func(context.Context) error {
			calls++
			return Abort(errors.New("process exited"))
		})
		require.ErrorContains(t, err, "process exited")
		assert.Equal(t, 1, calls)
		assert.Less(t, time.Since(start), time.Second)
	})
}

func mustDeadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}
