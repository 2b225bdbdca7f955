package fedenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/freeport"
	"github.com/federation-v1/federation/pkg/httpprobe"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
)

// ControllerManager is a controller manager a test started beside a local
// federation's own: same binary and kubeconfig, a serving port of its own.
// With leader election (the default) it stands by while another leads.
type ControllerManager struct {
	// Address serves its /healthz, /metrics and /debug/pprof/.
	Address string
	// Log is where its output goes.
	Log   string
	plane *processplane.Plane
	cmd   *exec.Cmd
	// exited is closed once it exited; waitErr is then Wait's error.
	exited  chan struct{}
	waitErr error
}

// StartControllerManager starts another controller manager of the local
// federation name with extra flags and waits for its /healthz. It dies with
// the test process; the test's cleanup kills it.
func (u *User) StartControllerManager(name string, flags ...string) *ControllerManager {
	u.T.Helper()
	plane := u.Plane(name)
	port, err := freeport.Pick("127.0.0.1")
	require.NoError(u.T, err)
	args := append([]string{
		"--kubeconfig=" + filepath.Join(u.PlaneDir(name), processplane.ControllerManagerKubeconfig),
		"--federation-name=" + name,
	}, plane.ControllerManagerServingArgs()...)
	// The last --secure-port wins over the plane's.
	args = append(append(args, "--secure-port="+strconv.Itoa(port)), flags...)
	cm := &ControllerManager{
		Address: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Log:     filepath.Join(u.T.TempDir(), "controller-manager.log"),
		plane:   plane,
		exited:  make(chan struct{}),
	}
	log, err := os.Create(cm.Log)
	require.NoError(u.T, err)
	defer log.Close()
	cm.cmd = exec.Command(filepath.Join(u.Bin, processplane.ControllerManager), args...)
	cm.cmd.Stdout, cm.cmd.Stderr = log, log
	cm.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	require.NoError(u.T, cm.cmd.Start())
	go func() {
		cm.waitErr = cm.cmd.Wait()
		close(cm.exited)
	}()
	u.T.Cleanup(func() {
		_ = cm.cmd.Process.Kill()
		<-cm.exited
	})
	require.NoError(u.T, poll.Until(context.Background(), 90*time.Second, "the started controller manager's /healthz", func(ctx context.Context) error {
		if cm.Exited() {
			return poll.Abort(fmt.Errorf("it exited: %v; see %s", cm.waitErr, cm.Log))
		}
		return httpprobe.GetOK(ctx, "https://"+cm.Address+"/healthz")
	}))
	return cm
}

// Pid is its process id.
func (c *ControllerManager) Pid() int { return c.cmd.Process.Pid }

// Signal sends it sig.
func (c *ControllerManager) Signal(sig os.Signal) error { return c.cmd.Process.Signal(sig) }

// Exited reports whether it has exited.
func (c *ControllerManager) Exited() bool {
	select {
	case <-c.exited:
		return true
	default:
		return false
	}
}

// Wait waits at most timeout for it to exit, and returns its exit code.
func (c *ControllerManager) Wait(timeout time.Duration) (int, error) {
	select {
	case <-c.exited:
	case <-time.After(timeout):
		return 0, fmt.Errorf("the controller manager (pid %d) did not exit within %s", c.Pid(), timeout)
	}
	var exit *exec.ExitError
	if c.waitErr != nil && !errors.As(c.waitErr, &exit) {
		return 0, c.waitErr
	}
	return c.cmd.ProcessState.ExitCode(), nil
}

// Metrics returns its /metrics, read over HTTPS as the plane's admin.
func (c *ControllerManager) Metrics() (string, error) {
	return c.plane.ControllerManagerMetrics("https://" + c.Address)
}
