// Package poll waits for a condition with a deadline, and says what it was
// waiting for when the deadline passes. Tests never sleep for a fixed time
// to wait for convergence; they poll.
package poll

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Interval between two checks.
const Interval = 100 * time.Millisecond

// abort marks an error after which waiting longer is pointless.
type abort struct{ error }

func (a abort) Unwrap() error { return a.error }

// Abort wraps err so that Until returns it at once instead of retrying.
func Abort(err error) error { return abort{err} }

// Until calls check every Interval until it returns nil, returns an Abort
// error, or timeout passes; the error names what and the last failure.
func Until(ctx context.Context, timeout time.Duration, what string, check func(ctx context.Context) error) error {
	return UntilEvery(ctx, timeout, Interval, what, check)
}

// UntilEvery is Until with another interval, for measurements that need a
// finer resolution.
func UntilEvery(ctx context.Context, timeout, interval time.Duration, what string, check func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var last error
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		var a abort
		if errors.As(err, &a) {
			return fmt.Errorf("waiting for %s: %w", what, a.error)
		}
		// An attempt cut short by the deadline says less than the one
		// before it: report the last that ran to its end.
		if ctx.Err() == nil || last == nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out after %s waiting for %s: %w", timeout, what, last)
		case <-tick.C:
		}
	}
}
