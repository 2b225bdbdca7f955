package kubefed_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/federation-v1/federation/pkg/localprocess"
	"github.com/federation-v1/federation/test/kubectl"
)

// user is a person with their own kubeconfig and home folder.
type user struct {
	t          *testing.T
	home       string
	kubeconfig string
}

func newUser(t *testing.T) *user {
	home := t.TempDir()
	u := &user{t: t, home: home, kubeconfig: filepath.Join(home, ".kube", "config")}
	// They already work with another cluster; init must not change that.
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["other"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	cfg.AuthInfos["other"] = &clientcmdapi.AuthInfo{Token: "x"}
	cfg.Contexts["other"] = &clientcmdapi.Context{Cluster: "other", AuthInfo: "other"}
	cfg.CurrentContext = "other"
	require.NoError(t, os.MkdirAll(filepath.Dir(u.kubeconfig), 0o700))
	require.NoError(t, clientcmd.WriteToFile(*cfg, u.kubeconfig))
	return u
}

// kubefed runs kubefed and returns its output and error.
func (u *user) kubefed(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(binDir, "kubefed"), args...)
	cmd.Env = append(os.Environ(), "HOME="+u.home, "KUBECONFIG="+u.kubeconfig)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (u *user) mustKubefed(args ...string) string {
	u.t.Helper()
	out, err := u.kubefed(args...)
	require.NoError(u.t, err, "kubefed %s:\n%s", strings.Join(args, " "), out)
	return out
}

func (u *user) kubectl() kubectl.Runner {
	return kubectl.Runner{Kubeconfig: u.kubeconfig, Timeout: 20 * time.Second}
}

func (u *user) planeDir(name string) string { return filepath.Join(u.home, ".federation", name) }

// initFederation runs kubefed init NAME --local (with extra flags) and
// removes the plane when the test ends.
func (u *user) initFederation(name string, extra ...string) string {
	u.t.Helper()
	u.t.Cleanup(func() {
		_, _ = u.kubefed("delete", name, "--local")
		for _, p := range localprocess.FindMentioning(u.planeDir(name), planePrograms) {
			_ = p.Stop(time.Second)
		}
	})
	return u.mustKubefed(append([]string{"init", name, "--local"}, extra...)...)
}

func TestLocalFederationLifecycle(t *testing.T) {
	ctx := context.Background()
	u := newUser(t)

	out := u.initFederation("fed")
	for _, line := range []string{
		"Creating federation control plane objects",
		"Starting federation control plane processes... done",
		"Waiting for federation control plane to come up",
		"Creating a namespace federation-system for federation system components... done",
		"Updating kubeconfig... done",
		"Federation API server is running at: https://127.0.0.1:",
	} {
		assert.Contains(t, out, line)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.True(t, strings.HasPrefix(lines[len(lines)-1], "Federation API server is running at: "), "the last line names the server:\n%s", out)

	cfg, err := clientcmd.LoadFromFile(u.kubeconfig)
	require.NoError(t, err)
	assert.Equal(t, "other", cfg.CurrentContext, "the current context stays")
	require.Contains(t, cfg.Contexts, "fed")
	assert.Equal(t, "fed", cfg.Contexts["fed"].Cluster)
	assert.Equal(t, "fed", cfg.Contexts["fed"].AuthInfo)
	assert.NotEmpty(t, cfg.Clusters["fed"].CertificateAuthorityData, "the CA is embedded")

	k := u.kubectl()
	got, err := k.Run(ctx, "--context=fed", "get", "namespace", "federation-system", "-o", "name")
	require.NoError(t, err)
	assert.Equal(t, "namespace/federation-system", strings.TrimSpace(got))

	t.Run("init of a running federation says so and changes nothing", func(t *testing.T) {
		before, err := os.ReadFile(filepath.Join(u.planeDir("fed"), "federation.json"))
		require.NoError(t, err)
		out, err := u.kubefed("init", "fed", "--local")
		require.Error(t, err)
		assert.Contains(t, out, `federation "fed" already runs`)
		after, err := os.ReadFile(filepath.Join(u.planeDir("fed"), "federation.json"))
		require.NoError(t, err)
		assert.Equal(t, string(before), string(after))
	})

	t.Run("dry run prints the plan and creates nothing", func(t *testing.T) {
		out := u.mustKubefed("init", "dry", "--local", "--dry-run")
		assert.Contains(t, out, "federation-apiserver --bind-address=127.0.0.1")
		assert.NoDirExists(t, u.planeDir("dry"))
		cfg, err := clientcmd.LoadFromFile(u.kubeconfig)
		require.NoError(t, err)
		assert.NotContains(t, cfg.Contexts, "dry")
	})

	t.Run("stop and start keep the data", func(t *testing.T) {
		_, err := k.Run(ctx, "--context=fed", "create", "namespace", "keep-me")
		require.NoError(t, err)
		u.mustKubefed("stop", "fed")
		_, err = k.Run(ctx, "--context=fed", "--request-timeout=3s", "get", "namespaces")
		require.Error(t, err, "a stopped federation does not answer")
		assert.Empty(t, localprocess.FindMentioning(u.planeDir("fed"), planePrograms))

		out := u.mustKubefed("start", "fed")
		assert.Contains(t, out, "Federation API server is running at: https://127.0.0.1:")
		got, err := k.Run(ctx, "--context=fed", "get", "namespace", "keep-me", "-o", "name")
		require.NoError(t, err)
		assert.Equal(t, "namespace/keep-me", strings.TrimSpace(got))
	})

	t.Run("delete removes processes, data and kubeconfig entries", func(t *testing.T) {
		out := u.mustKubefed("delete", "fed", "--local")
		assert.Contains(t, out, `Federation "fed" deleted`)
		assert.NoDirExists(t, u.planeDir("fed"))
		assert.Empty(t, localprocess.FindMentioning(u.planeDir("fed"), planePrograms))
		cfg, err := clientcmd.LoadFromFile(u.kubeconfig)
		require.NoError(t, err)
		assert.NotContains(t, cfg.Contexts, "fed")
		assert.NotContains(t, cfg.Clusters, "fed")
		assert.NotContains(t, cfg.AuthInfos, "fed")
		assert.Equal(t, "other", cfg.CurrentContext)
	})
}

func TestInitRejectsBadInput(t *testing.T) {
	u := newUser(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"init", "Bad_Name", "--local"}, `federation name "Bad_Name"`},
		{[]string{"init", "fed"}, "use --local"},
		{[]string{"init", "fed", "--local", "--api-server-port=70000"}, "--api-server-port 70000"},
		{[]string{"init"}, "accepts 1 arg"},
		{[]string{"stop", "nothing-here"}, `no local federation "nothing-here"`},
	}
	for _, tt := range tests {
		out, err := u.kubefed(tt.args...)
		assert.Error(t, err, "kubefed %v", tt.args)
		assert.Contains(t, out, tt.want, "kubefed %v", tt.args)
	}
	assert.NoDirExists(t, filepath.Join(u.home, ".federation", "fed"), "a rejected init creates nothing")
}

// planePrograms are the programs of a local federation.
var planePrograms = map[string]bool{"federation-apiserver": true, "federation-controller-manager": true}
