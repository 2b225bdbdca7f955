// Package localprocess starts, watches and stops the programs of a local
// control plane or test environment. A process is described by a Process,
// which can be saved as JSON so that another process (a later `stop`
// command) can find and stop it again.
package localprocess

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is one program. Its fields are kept in a state file so that
// another process can stop it.
type Process struct {
	Name string   `json:"name"`
	Path string   `json:"path"`
	Args []string `json:"args"`
	Log  string   `json:"log"`
	Pid  int      `json:"pid"`

	// exited is closed once the process is reaped, when this process started it.
	exited chan struct{}
}

// runHeader begins the line Start writes to the log before each run.
const runHeader = "=== "

// Start runs p with its output appended to p.Log. A detached process gets its
// own session and outlives us; otherwise the kernel kills it when we die
// (Pdeathsig), so a crashed or interrupted test leaves nothing behind.
func (p *Process) Start(detached bool) error {
	logFile, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "%s%s starting %s %s\n", runHeader, time.Now().Format(time.RFC3339), p.Path, strings.Join(p.Args, " "))

	cmd := exec.Command(p.Path, p.Args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if detached {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else {
		cmd.SysProcAttr = attachedProcAttr()
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", p.Name, err)
	}
	p.Pid = cmd.Process.Pid
	p.exited = make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	return nil
}

// Alive reports whether the process still runs (a zombie does not count, and
// neither does an unrelated process that reused the pid).
func (p *Process) Alive() bool {
	if p == nil || p.Pid == 0 {
		return false
	}
	if p.exited != nil {
		select {
		case <-p.exited:
			return false
		default:
			return true
		}
	}
	return Runs(p.Pid, p.Path)
}

// Runs reads /proc to tell whether pid is a live process running path.
func Runs(pid int, path string) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' {
		return false
	}
	cmdline, err := readCmdline(pid)
	if err != nil {
		return false
	}
	argv0, _, _ := bytes.Cut(cmdline, []byte{0})
	return string(argv0) == path
}

// Exited reports whether pid has exited entirely: no such process, or a
// zombie whose threads have all gone. A killed process's main thread is a
// zombie before its other threads have exited, and until the last one has,
// its files (its listening sockets among them) are still open.
func Exited(pid int) bool {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return true
	}
	if len(tasks) > 1 {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}

// readCmdline reads /proc/PID/cmdline. Right after an exec the kernel shows
// it empty for a moment (seen in about one start in ten here), so an empty
// one is read again for up to 100ms before it is believed.
func readCmdline(pid int) ([]byte, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/cmdline"
	for tries := 0; ; tries++ {
		cmdline, err := os.ReadFile(path)
		if err != nil || len(cmdline) > 0 || tries == 10 {
			return cmdline, err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stop sends SIGTERM to the process group, and SIGKILL if it has not exited
// within grace.
func (p *Process) Stop(grace time.Duration) error {
	if !p.Alive() {
		return nil
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGTERM)
	if p.waitExit(grace) {
		return nil
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	if p.waitExit(5 * time.Second) {
		return nil
	}
	return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.Name, p.Pid)
}

func (p *Process) waitExit(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for p.Alive() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// LogTail returns the last lines of the process's log, for error messages.
func (p *Process) LogTail(lines int) string { return Tail(p.Log, lines) }

// Tail returns the last lines of the file at path ("" if it cannot be read).
func Tail(path string, lines int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// LastRunLog returns what the process's latest run wrote to its log, from
// the line Start wrote before it.
func (p *Process) LastRunLog() string {
	data, err := os.ReadFile(p.Log)
	if err != nil {
		return ""
	}
	log := string(data)
	if i := strings.LastIndex(log, "\n"+runHeader); i >= 0 {
		return log[i+1:]
	}
	return log
}

// FindMentioning finds the live processes whose program's base name is in
// programs and whose command line mentions dir. A local environment names its
// run folder in every program's arguments, so this finds its processes even
// when its state file is lost.
func FindMentioning(dir string, programs map[string]bool) []*Process {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var found []*Process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		// No retry here: kernel threads have empty command lines for good.
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmdline, []byte(dir)) {
			continue
		}
		argv0, _, _ := bytes.Cut(cmdline, []byte{0})
		name := filepath.Base(string(argv0))
		if programs[name] && Runs(pid, string(argv0)) {
			found = append(found, &Process{Name: name, Path: string(argv0), Pid: pid})
		}
	}
	return found
}
