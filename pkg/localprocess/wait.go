package localprocess

import (
	"context"
	"fmt"
	"time"

	"github.com/federation-v1/federation/pkg/poll"
)

// WaitFor polls check until it passes, like poll.Until, and gives up at once
// when proc (if not nil) has died; either error ends with the last lines of
// proc's log, which usually say why.
func WaitFor(ctx context.Context, timeout time.Duration, what string, proc *Process, check func() error) error {
	err := poll.Until(ctx, timeout, what, func(context.Context) error {
		err := check()
		if err != nil && proc != nil && !proc.Alive() {
			return poll.Abort(fmt.Errorf("%s exited (last error: %w)", proc.Name, err))
		}
		return err
	})
	if err != nil && proc != nil {
		err = fmt.Errorf("%w; end of %s:\n%s", err, proc.Log, proc.LogTail(20))
	}
	return err
}
