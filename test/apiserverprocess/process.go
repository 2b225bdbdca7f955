// Package apiserverprocess runs an API server binary (federation-apiserver
// or kube-apiserver) as a child process for tests and benchmarks: start it
// with its log in a file, wait until /readyz answers, stop it. It is
// pkg/localprocess (the process dies with the test) plus readiness with a
// bearer token and the resident memory.
package apiserverprocess

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/federation-v1/federation/pkg/httpprobe"
	"github.com/federation-v1/federation/pkg/localprocess"
	"github.com/federation-v1/federation/pkg/poll"
)

// stopTimeout is how long Stop waits after SIGTERM before killing.
const stopTimeout = 30 * time.Second

// Process is a running API server.
type Process struct {
	proc *localprocess.Process
}

// Start runs binary with args, its stdout and stderr going to logPath.
func Start(binary string, args []string, logPath string) (*Process, error) {
	p := &localprocess.Process{Name: filepath.Base(binary), Path: binary, Args: args, Log: logPath}
	if err := p.Start(false); err != nil {
		return nil, err
	}
	return &Process{proc: p}, nil
}

// WaitReady polls baseURL/readyz with a bearer token until it answers 200,
// failing early if the process exits.
func (p *Process) WaitReady(baseURL, token string, timeout time.Duration) error {
	return localprocess.WaitFor(context.Background(), timeout, p.proc.Name+" /readyz", p.proc, func() error {
		return httpprobe.GetOKAs(context.Background(), baseURL+"/readyz", token)
	})
}

// Stop terminates the process and waits for it, killing it if it does not
// stop in time. Stopping twice is harmless.
func (p *Process) Stop() {
	if p == nil || p.proc == nil {
		return
	}
	_ = p.proc.Stop(stopTimeout)
}

// Kill kills the process group with SIGKILL, as a crash would (nothing of
// the server runs after it: no shutdown hook, no release), and waits until
// it has exited entirely.
func (p *Process) Kill() error {
	if err := syscall.Kill(-p.proc.Pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("killing %s (pid %d): %w", p.proc.Name, p.proc.Pid, err)
	}
	return poll.Until(context.Background(), stopTimeout, p.proc.Name+" to exit after SIGKILL", func(context.Context) error {
		if !localprocess.Exited(p.proc.Pid) {
			return fmt.Errorf("pid %d still runs", p.proc.Pid)
		}
		return nil
	})
}

// RSSBytes returns the resident memory of the process, from /proc.
func (p *Process) RSSBytes() (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.proc.Pid))
	if err != nil {
		return 0, fmt.Errorf("reading the status of %s: %w", p.proc.Name, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parsing VmRSS %q of %s: %w", rest, p.proc.Name, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in the status of %s", p.proc.Name)
}
