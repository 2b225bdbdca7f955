// Package apiserverprocess runs an API server binary (federation-apiserver
// or kube-apiserver) as a child process for tests and benchmarks: start it
// with its log in a file, wait until /readyz answers, stop it.
package apiserverprocess

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stopTimeout is how long Stop waits after SIGTERM before killing.
const stopTimeout = 30 * time.Second

// Process is a running API server.
type Process struct {
	cmd    *exec.Cmd
	exited chan error
	// LogPath is the file the process writes its output to.
	LogPath string
}

// Start runs binary with args, its stdout and stderr going to logPath.
func Start(binary string, args []string, logPath string) (*Process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating the log %s: %w", logPath, err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	p := &Process{cmd: cmd, exited: make(chan error, 1), LogPath: logPath}
	go func() {
		p.exited <- cmd.Wait()
		logFile.Close()
	}()
	return p, nil
}

// WaitReady polls baseURL/readyz with a bearer token until it answers 200,
// failing early if the process exits.
func (p *Process) WaitReady(baseURL, token string, timeout time.Duration) error {
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	deadline := time.Now().Add(timeout)
	last := "no answer"
	for time.Now().Before(deadline) {
		select {
		case err := <-p.exited:
			p.exited <- err
			return fmt.Errorf("%s exited before it was ready: %v (log: %s)", p.cmd.Path, err, p.LogPath)
		default:
		}
		req, err := http.NewRequest(http.MethodGet, baseURL+"/readyz", nil)
		if err != nil {
			return fmt.Errorf("building the /readyz request: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s: last /readyz answer: %s (log: %s)", p.cmd.Path, timeout, last, p.LogPath)
}

// Stop terminates the process and waits for it, killing it if it does not
// stop in time. Stopping twice is harmless.
func (p *Process) Stop() {
	if p == nil || p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	p.cmd = nil
}

// FreePort returns a port of 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, fmt.Errorf("listener address %v is not TCP", l.Addr())
	}
	return addr.Port, nil
}

// RSSBytes returns the resident memory of the process, from /proc.
func (p *Process) RSSBytes() (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("reading the status of %s: %w", p.cmd.Path, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parsing VmRSS %q of %s: %w", rest, p.cmd.Path, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in the status of %s", p.cmd.Path)
}
