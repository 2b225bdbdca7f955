package kubectl

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/poll"
)

// Background is a kubectl that runs until the test ends (logs -f,
// port-forward, attach).
type Background struct {
	args        []string
	cmd         *exec.Cmd
	mu          sync.Mutex // guards out and errOut, which kubectl writes
	out, errOut bytes.Buffer
	done        chan struct{} // closed once kubectl has ended, with waitErr
	waitErr     error
}

// lockedWriter writes into buf under mu.
type lockedWriter struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// Start starts kubectl (Default) with args and kubeconfig; it is killed
// when the test ends.
func Start(t *testing.T, kubeconfig string, args ...string) *Background {
	t.Helper()
	b := &Background{done: make(chan struct{}), args: args}
	b.cmd = exec.Command(Default, append([]string{"--kubeconfig=" + kubeconfig}, args...)...)
	b.cmd.Env = append(os.Environ(), "KUBECONFIG=")
	b.cmd.Stdout = lockedWriter{&b.mu, &b.out}
	b.cmd.Stderr = lockedWriter{&b.mu, &b.errOut}
	require.NoError(t, b.cmd.Start())
	go func() {
		b.waitErr = b.cmd.Wait()
		close(b.done)
	}()
	t.Cleanup(func() {
		_ = b.cmd.Process.Kill()
		<-b.done
	})
	return b
}

// Stdout is what kubectl wrote to its standard output so far.
func (b *Background) Stdout() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.out.String()
}

// Exited is an error once kubectl has ended, with what it said.
func (b *Background) Exited() error {
	select {
	case <-b.done:
		b.mu.Lock()
		defer b.mu.Unlock()
		return fmt.Errorf("kubectl %s ended (%v): %s", strings.Join(b.args, " "), b.waitErr, strings.TrimSpace(b.errOut.String()))
	default:
		return nil
	}
}

// WaitFor polls kubectl's standard output until ok says it holds what is
// awaited, for 30 seconds or until kubectl ends.
func (b *Background) WaitFor(ctx context.Context, what string, ok func(stdout string) bool) error {
	return poll.Until(ctx, 30*time.Second, what, func(context.Context) error {
		out := b.Stdout()
		if ok(out) {
			return nil
		}
		if err := b.Exited(); err != nil {
			return poll.Abort(err)
		}
		return fmt.Errorf("kubectl said %q so far", out)
	})
}
