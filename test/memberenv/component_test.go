package memberenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
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
