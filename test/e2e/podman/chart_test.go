package podman_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/federation-v1/federation/test/e2e/podman/kubeplay"
	"github.com/federation-v1/federation/test/kubectl"
	"github.com/federation-v1/federation/test/memberenv"
)

// TestChartPlayedByPodman renders the chart as `helm template` does, with
// the credentials it generates itself, and runs its pods: the apiserver
// serves, and the admin kubeconfig it rendered works with kubectl.
func TestChartPlayedByPodman(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the image and runs the control plane's pods with podman")
	}
	ref := builtImage(t)
	root, err := memberenv.RepoRoot()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bins, err := memberenv.EnsureBinaries(ctx, root, t.Logf)
	require.NoError(t, err)

	p := freePorts(t)
	values := p.values("example.com.")
	values["image"] = imageValues(ref)
	values["apiserver"].(map[string]any)["advertiseAddress"] = "127.0.0.1"
	rendered := helmTemplate(t, bins.Helm, filepath.Join(root, "deploy", "charts", "federation"), writeValues(t, values))
	objs, err := kubeplay.Decode(rendered)
	require.NoError(t, err)
	plane := play(t, objs)

	apiserver := "https://" + hostPort("127.0.0.1", p.apiserver)
	plane.waitReady(apiserver + "/readyz")
	for _, url := range []string{
		"https://" + hostPort("127.0.0.1", p.controllerManager) + "/healthz",
		"http://" + hostPort("127.0.0.1", p.dnsHealth) + "/health",
		"http://" + hostPort("127.0.0.1", p.etcdMetrics) + "/health",
	} {
		plane.waitReady(url)
	}

	kubeconfig := filepath.Join(t.TempDir(), "admin.kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, secretKey(t, objs, "fed-admin-kubeconfig", "kubeconfig"), 0o600))
	k := kubectl.Runner{Kubeconfig: kubeconfig, Timeout: 20 * time.Second}
	out, err := k.Run(ctx, "config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}")
	require.NoError(t, err)
	require.Equal(t, apiserver, out, "the admin kubeconfig's server")
	out, err = k.Run(ctx, "get", "clusters", "-o", "name")
	require.NoError(t, err, "kubectl get clusters as the chart's admin")
	require.Empty(t, out, "no member yet")
	plane.requireAllUp()
}

// helmTemplate renders the chart as the release "fed" in federation-system.
func helmTemplate(t *testing.T, helm, chart, values string) []byte {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(helm, "template", "fed", chart, "--namespace", "federation-system", "--values", values)
	cmd.Env = append(os.Environ(), "HOME="+home, "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "helm template: %s", stderr.String())
	return out
}

// secretKey returns a key of a rendered Secret.
func secretKey(t *testing.T, objs []runtime.Object, name, key string) []byte {
	t.Helper()
	for _, obj := range objs {
		if s, ok := obj.(*corev1.Secret); ok && s.Name == name {
			if v, ok := s.Data[key]; ok {
				return v
			}
			if v, ok := s.StringData[key]; ok {
				return []byte(v)
			}
		}
	}
	t.Fatalf("no Secret %s with the key %s rendered", name, key)
	return nil
}

// imageValues are the chart's image values of an image reference.
func imageValues(ref string) map[string]any {
	i := strings.LastIndex(ref, ":")
	return map[string]any{"repository": ref[:i], "tag": ref[i+1:]}
}
