//go:build !linux

package localprocess

import "syscall"

// attachedProcAttr puts an attached process in its own group (so that Stop
// reaches its children). Only Linux can have the kernel kill it when we die
// (Pdeathsig): elsewhere an interrupted test may leave it running.
func attachedProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
