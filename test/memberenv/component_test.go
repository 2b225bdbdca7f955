package memberenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/httpprobe"
)

// TestComponentMovesOffATakenPort: when another process holds a program's
// port (and answers /healthz there), the program dies binding it and is
// started again on a new port.
func TestComponentMovesOffATakenPort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a member cluster")
	}
	ctx := context.Background()
	env, err := Start(ctx, Options{Dir: filepath.Join(t.TempDir(), "env"), Clusters: DefaultClusters(1, 1)})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, env.Stop()) })
	m := env.Member("cluster1")

	require.NoError(t, env.stopProcesses(m, KubeScheduler))
	taken := m.Ports[KubeScheduler]
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", taken))
	require.NoError(t, err, "taking the scheduler's port")
	// What holds it answers /healthz too, as another member program would.
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	other.Listener = l
	other.StartTLS()
	defer other.Close()

	require.NoError(t, env.startComponent(ctx, m, KubeScheduler))
	assert.NotEqual(t, taken, m.Ports[KubeScheduler], "the scheduler moved to another port")
	assert.True(t, m.Processes[KubeScheduler].Alive())
	require.NoError(t, httpprobe.GetOK(ctx, m.healthURL(KubeScheduler)))
}

// TestKwokThatCrashesWhileStartingIsStartedAgain: kwok v0.8.0 can die of a Go
// runtime fatal error while it builds its CEL environments (CI saw it). Such
// a kwok is started again and the nodes become Ready; a kwok that exits for
// any other reason is reported, not retried.
func TestKwokThatCrashesWhileStartingIsStartedAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a member cluster")
	}
	ctx := context.Background()
	env, err := Start(ctx, Options{Dir: filepath.Join(t.TempDir(), "env"), Clusters: DefaultClusters(1, 1)})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, env.Stop()) })
	m := env.Member("cluster1")
	client, err := env.Client("cluster1")
	require.NoError(t, err)
	realKwok := env.Binaries.Kwok

	// The first run dies as kwok did in CI; later runs are the real kwok.
	require.NoError(t, env.stopProcesses(m, Kwok))
	crashed := filepath.Join(t.TempDir(), "crashed")
	env.Binaries.Kwok = writeScript(t, fmt.Sprintf(`if [ ! -e %[1]s ]; then touch %[1]s; echo 'fatal error: concurrent map writes' >&2; exit 2; fi
exec %[2]s "$@"`, crashed, realKwok))
	require.NoError(t, env.startKwok(ctx, m, client))
	assert.FileExists(t, crashed, "the first kwok run crashed")
	assert.True(t, m.Processes[Kwok].Alive(), "kwok runs after its restart")
	require.NoError(t, env.waitNodesReady(ctx, m, client))

	// A kwok that fails for another reason is not started again.
	require.NoError(t, env.stopProcesses(m, Kwok))
	runs := filepath.Join(t.TempDir(), "runs")
	env.Binaries.Kwok = writeScript(t, fmt.Sprintf(`echo run >> %s; echo 'unknown flag: --bogus' >&2; exit 1`, runs))
	err = env.startKwok(ctx, m, client)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unknown flag")
	out, readErr := os.ReadFile(runs)
	require.NoError(t, readErr)
	assert.Equal(t, "run\n", string(out), "kwok was started once")
}

// writeScript writes an executable shell script and returns its path.
func writeScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kwok")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return path
}
