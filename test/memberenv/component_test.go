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
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/federation-v1/federation/pkg/httpprobe"
	"github.com/federation-v1/federation/pkg/poll"
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

// TestNodesFollowKwokToANewPort: kube-apiserver reaches kwok's kubelet
// server (pod logs) at the port in the nodes' status, which follows kwok
// when it moves off a taken port.
func TestNodesFollowKwokToANewPort(t *testing.T) {
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
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "box"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "box", Image: "busybox"}}},
	}
	_, err = client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, poll.Until(ctx, 60*time.Second, "pod box running", func(ctx context.Context) error {
		p, err := client.CoreV1().Pods("default").Get(ctx, "box", metav1.GetOptions{})
		if err == nil && p.Status.Phase != corev1.PodRunning {
			err = fmt.Errorf("phase %q", p.Status.Phase)
		}
		return err
	}))

	require.NoError(t, env.stopProcesses(m, Kwok))
	taken := m.Ports[Kwok]
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", taken))
	require.NoError(t, err, "taking kwok's port")
	defer l.Close()
	require.NoError(t, env.StartMember(ctx, "cluster1"))
	require.NotEqual(t, taken, m.Ports[Kwok], "kwok moved to another port")

	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, n := range nodes.Items {
		assert.Equal(t, int32(m.Ports[Kwok]), n.Status.DaemonEndpoints.KubeletEndpoint.Port, n.Name)
	}
	logCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	log, err := client.CoreV1().Pods("default").GetLogs("box", &corev1.PodLogOptions{}).DoRaw(logCtx)
	require.NoError(t, err)
	assert.Equal(t, PodLogLine("cluster1")+"\n", string(log))
}
