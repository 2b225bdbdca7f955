// Package testprocess runs a program for the length of one test: its output
// in a log file, killed with the test binary, stopped when the test ends,
// and its log printed when the test failed.
package testprocess

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/federation-v1/federation/pkg/localprocess"
)

// stopGrace is how long a program has to exit after SIGTERM.
const stopGrace = 10 * time.Second

// logLines is how much of the log a failed test prints.
const logLines = 150

// Process is a program Start started.
type Process struct {
	// Log is the file its standard output and error go to.
	Log    string
	exited chan struct{}
	err    error
}

// Start starts cmd with its standard output and error in name.log under
// t.TempDir(). The kernel kills it if the test binary dies; when the test
// ends it gets SIGTERM, and SIGKILL after 10 s. If the test failed, the
// log's last lines are printed.
func Start(t testing.TB, name string, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{Log: filepath.Join(t.TempDir(), name+".log"), exited: make(chan struct{})}
	logFile, err := os.Create(p.Log)
	if err != nil {
		t.Fatalf("creating the log of %s: %v", name, err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(stopGrace):
			_ = cmd.Process.Kill()
			<-p.exited
		}
		logFile.Close()
		if t.Failed() {
			t.Logf("%s's log (last %d lines):\n%s", name, logLines, localprocess.Tail(p.Log, logLines))
		}
	})
	return p
}

// Exited is closed once the program has exited; Err then tells how.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Err is how the program exited, once Exited is closed.
func (p *Process) Err() error { return p.err }
