package memberenv

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func TestPodLogIsInTheCRIFormatAndGrows(t *testing.T) {
	dir := t.TempDir()
	m := &Member{Spec: ClusterSpec{Name: "c7"}, Dir: dir}
	env := &Environment{Members: []*Member{m, {Spec: ClusterSpec{Name: "api", APIOnly: true}}}}
	require.NoError(t, m.writePodFiles())
	require.NoError(t, env.AppendPodLog("c7", "second\nthird"))

	data, err := os.ReadFile(filepath.Join(dir, "pods", "pods.log"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var got []string
	for _, l := range lines {
		// <RFC 3339 time> <stream> <tag> <line>, as kwok's log reader parses it.
		f := strings.SplitN(l, " ", 4)
		require.Len(t, f, 4, l)
		_, err := time.Parse(time.RFC3339Nano, f[0])
		require.NoError(t, err, l)
		assert.Equal(t, []string{"stdout", "F"}, f[1:3], l)
		got = append(got, f[3])
	}
	assert.Equal(t, []string{PodLogLine("c7"), "second", "third"}, got)
	assert.Contains(t, PodLogLine("c7"), "c7", "a test tells members apart by their pods' logs")

	exec, err := os.ReadFile(filepath.Join(dir, "pods", "exec", ExecClusterFile))
	require.NoError(t, err)
	assert.Equal(t, "c7\n", string(exec))

	assert.ErrorContains(t, env.AppendPodLog("nope", "x"), "no cluster")
	assert.ErrorContains(t, env.AppendPodLog("api", "x"), "API-only")
}

func TestKwokConfigSendsEveryPodToTheMembersFiles(t *testing.T) {
	m := &Member{Spec: ClusterSpec{Name: "c2"}, Dir: "/run/c2", Ports: map[string]int{LoadBalancer: 12345}}
	b, err := m.kwokConfig()
	require.NoError(t, err)
	specs := map[string]map[string]any{}
	for _, doc := range strings.Split(string(b), "---\n") {
		var obj map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(doc), &obj))
		assert.Equal(t, "kwok.x-k8s.io/v1alpha1", obj["apiVersion"])
		specs[obj["kind"].(string)] = obj["spec"].(map[string]any)
	}
	first := func(kind, list string) map[string]any {
		items := specs[kind][list].([]any)
		require.Len(t, items, 1, kind)
		return items[0].(map[string]any)
	}
	assert.Equal(t, "/run/c2/pods/pods.log", first("ClusterLogs", "logs")["logsFile"])
	assert.Equal(t, true, first("ClusterLogs", "logs")["follow"])
	assert.Equal(t, "/run/c2/pods/pods.log", first("ClusterAttach", "attaches")["logsFile"])
	local := first("ClusterExec", "execs")["local"].(map[string]any)
	assert.Equal(t, "/run/c2/pods/exec", local["workDir"])
	assert.Equal(t, []any{map[string]any{"name": ExecClusterEnv, "value": "c2"}}, local["envs"])
	assert.Equal(t, map[string]any{"address": "127.0.0.1", "port": float64(12345)}, first("ClusterPortForward", "forwards")["target"])
	assert.Len(t, specs, 4)
}

func TestNodesLeadKubeAPIServerToKwokOnLoopback(t *testing.T) {
	m := &Member{Spec: ClusterSpec{Name: "c3", Region: "r", Zones: []string{"z"}, Nodes: 1}, PodCIDR: "10.3.0.1/16", Ports: map[string]int{Kwok: 23456}}
	nodes := m.nodeObjects()
	require.Len(t, nodes, 1)
	n := nodes[0]
	assert.Equal(t, []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "10.3.0.1"}, // pods' hostIP, as kwok's --node-ip
		{Type: corev1.NodeHostName, Address: "c3-node-1"},
		{Type: corev1.NodeInternalDNS, Address: "127.0.0.1"},
	}, n.Status.Addresses)
	assert.Equal(t, int32(23456), n.Status.DaemonEndpoints.KubeletEndpoint.Port)
	assert.True(t, reachesKwok(n, 23456))
	assert.False(t, reachesKwok(n, 23457), "kwok moved to another port")
	n.Status.Addresses = n.Status.Addresses[:2]
	assert.False(t, reachesKwok(n, 23456), "no loopback address")
}

func TestServePodPortsAnswersWithTheClusterName(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var announce bytes.Buffer
	served := make(chan error, 1)
	go func() { served <- ServePodPorts(ctx, l, "c5", &announce) }()

	resp, err := http.Get("http://" + l.Addr().String() + "/any/path")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, PortForwardAnswer("c5"), string(body))
	assert.Equal(t, "c5", PortForwardAnswer("c5"))
	cancel()
	require.NoError(t, <-served)
	assert.Equal(t, podPortsServingLine(l.Addr().String())+"\n", announce.String())
}
