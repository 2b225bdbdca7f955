package memberenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProcessLifecycle runs a real program: start, find it as a leftover of
// its run folder, stop it, and see it gone.
func TestProcessLifecycle(t *testing.T) {
	dir := t.TempDir()
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	// Leftovers recognises only the environment's programs, so run sleep
	// under one of their names.
	program := filepath.Join(dir, "etcd")
	require.NoError(t, os.Symlink(sleep, program))

	p := &Process{Name: "sleeper", Path: program, Args: []string{"300"}, Log: filepath.Join(dir, "sleeper.log")}
	require.NoError(t, p.start(false))
	t.Cleanup(func() { _ = p.stop(time.Second) })

	assert.True(t, p.Alive())
	assert.Contains(t, Leftovers(dir), p.Pid, "a process whose command line names the folder is found")

	// Seen from another process (the state file), liveness comes from /proc.
	loaded := &Process{Name: p.Name, Path: p.Path, Pid: p.Pid}
	assert.True(t, loaded.Alive())
	reused := &Process{Name: "other", Path: "/usr/bin/other", Pid: p.Pid}
	assert.False(t, reused.Alive(), "a pid now running another program is not ours")

	require.NoError(t, p.stop(5*time.Second))
	assert.False(t, p.Alive())
	assert.Empty(t, Leftovers(dir))

	log, err := os.ReadFile(p.Log)
	require.NoError(t, err)
	assert.Contains(t, string(log), "starting "+program+" 300")
}
