package memberenv

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"time"

	"github.com/federation-v1/federation/test/poll"
)

// waitFor waits for check like poll.Until, and gives up at once when proc (if
// not nil) has died; either error ends with the last lines of proc's log.
func waitFor(ctx context.Context, timeout time.Duration, what string, proc *Process, check func() error) error {
	err := poll.Until(ctx, timeout, what, func(context.Context) error {
		if err := check(); err == nil {
			return nil
		} else if proc != nil && !proc.Alive() {
			return poll.Abort(fmt.Errorf("%s exited (last error: %w)", proc.Name, err))
		} else {
			return err
		}
	})
	if err != nil && proc != nil {
		err = fmt.Errorf("%w; end of %s:\n%s", err, proc.Log, proc.logTail(20))
	}
	return err
}

// httpGetOK fails unless GET url answers 200 (etcd's /health).
func httpGetOK(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback health probe
	}}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
