package localprocess

import "syscall"

// attachedProcAttr puts an attached process in its own group (so that Stop
// reaches its children) and has the kernel kill it when we die.
func attachedProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
