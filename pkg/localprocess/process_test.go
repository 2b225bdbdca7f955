package localprocess

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	// FindMentioning recognises programs by name, so run sleep under another.
	program := filepath.Join(dir, "etcd")
	require.NoError(t, os.Symlink(sleep, program))

	p := &Process{Name: "sleeper", Path: program, Args: []string{"300"}, Log: filepath.Join(dir, "sleeper.log")}
	require.NoError(t, p.Start(false))
	t.Cleanup(func() { _ = p.Stop(time.Second) })

	assert.True(t, p.Alive())
	// Seen from another process (the state file), liveness comes from /proc.
	loaded := &Process{Name: p.Name, Path: p.Path, Pid: p.Pid}
	assert.True(t, loaded.Alive())
	reused := &Process{Name: "other", Path: "/usr/bin/other", Pid: p.Pid}
	assert.False(t, reused.Alive(), "a pid now running another program is not ours")

	found := FindMentioning(dir, map[string]bool{"etcd": true})
	require.Len(t, found, 1, "a process whose command line names the folder is found")
	assert.Equal(t, p.Pid, found[0].Pid)
	require.NoError(t, found[0].Stop(5*time.Second), "a found process can be stopped")
	assert.True(t, p.waitExit(time.Second), "the starter's handle sees it gone once it is reaped")

	assert.Empty(t, FindMentioning(dir, map[string]bool{"etcd": true}))

	log, err := os.ReadFile(p.Log)
	require.NoError(t, err)
	assert.Contains(t, string(log), "starting "+program+" 300")
}

// TestLastRunLogIsTheLatestRunOnly runs a real program twice on one log.
func TestLastRunLogIsTheLatestRunOnly(t *testing.T) {
	dir := t.TempDir()
	echo, err := exec.LookPath("echo")
	require.NoError(t, err)
	p := &Process{Name: "echo", Path: echo, Log: filepath.Join(dir, "echo.log")}
	for _, word := range []string{"first", "second"} {
		p.Args = []string{word + "-run"}
		require.NoError(t, p.Start(false))
		assert.True(t, p.waitExit(5*time.Second))
	}
	last := p.LastRunLog()
	assert.Contains(t, last, "second-run\n")
	assert.NotContains(t, last, "first-run")
	assert.True(t, strings.HasPrefix(last, runHeader), "the run begins with its header: %q", last)
}
