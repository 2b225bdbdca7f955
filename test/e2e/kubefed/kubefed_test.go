package kubefed_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/localprocess"
	"github.com/federation-v1/federation/test/fedenv"
)

func TestLocalFederationLifecycle(t *testing.T) {
	ctx := context.Background()
	u := fedenv.NewUser(t, binDir)

	out := u.InitFederation("fed")
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

	cfg, err := clientcmd.LoadFromFile(u.Kubeconfig)
	require.NoError(t, err)
	assert.Equal(t, "other", cfg.CurrentContext, "the current context stays")
	require.Contains(t, cfg.Contexts, "fed")
	assert.Equal(t, "fed", cfg.Contexts["fed"].Cluster)
	assert.Equal(t, "fed", cfg.Contexts["fed"].AuthInfo)
	assert.NotEmpty(t, cfg.Clusters["fed"].CertificateAuthorityData, "the CA is embedded")

	k := u.Kubectl()
	got, err := k.Run(ctx, "--context=fed", "get", "namespace", "federation-system", "-o", "name")
	require.NoError(t, err)
	assert.Equal(t, "namespace/federation-system", strings.TrimSpace(got))

	t.Run("init of a running federation says so and changes nothing", func(t *testing.T) {
		before, err := os.ReadFile(filepath.Join(u.PlaneDir("fed"), "federation.json"))
		require.NoError(t, err)
		out, err := u.Kubefed("init", "fed", "--local")
		require.Error(t, err)
		assert.Contains(t, out, `federation "fed" already runs`)
		after, err := os.ReadFile(filepath.Join(u.PlaneDir("fed"), "federation.json"))
		require.NoError(t, err)
		assert.Equal(t, string(before), string(after))
	})

	t.Run("dry run prints the plan and creates nothing", func(t *testing.T) {
		out := u.MustKubefed("init", "dry", "--local", "--dry-run")
		assert.Contains(t, out, "federation-apiserver --bind-address=127.0.0.1")
		assert.NoDirExists(t, u.PlaneDir("dry"))
		cfg, err := clientcmd.LoadFromFile(u.Kubeconfig)
		require.NoError(t, err)
		assert.NotContains(t, cfg.Contexts, "dry")
	})

	t.Run("stop and start keep the data", func(t *testing.T) {
		_, err := k.Run(ctx, "--context=fed", "create", "namespace", "keep-me")
		require.NoError(t, err)
		u.MustKubefed("stop", "fed")
		_, err = k.Run(ctx, "--context=fed", "--request-timeout=3s", "get", "namespaces")
		require.Error(t, err, "a stopped federation does not answer")
		assert.Empty(t, localprocess.FindMentioning(u.PlaneDir("fed"), fedenv.PlanePrograms()))

		out := u.MustKubefed("start", "fed")
		assert.Contains(t, out, "Federation API server is running at: https://127.0.0.1:")
		got, err := k.Run(ctx, "--context=fed", "get", "namespace", "keep-me", "-o", "name")
		require.NoError(t, err)
		assert.Equal(t, "namespace/keep-me", strings.TrimSpace(got))
	})

	t.Run("delete removes processes, data and kubeconfig entries", func(t *testing.T) {
		out := u.MustKubefed("delete", "fed", "--local")
		assert.Contains(t, out, `Federation "fed" deleted`)
		assert.NoDirExists(t, u.PlaneDir("fed"))
		assert.Empty(t, localprocess.FindMentioning(u.PlaneDir("fed"), fedenv.PlanePrograms()))
		cfg, err := clientcmd.LoadFromFile(u.Kubeconfig)
		require.NoError(t, err)
		assert.NotContains(t, cfg.Contexts, "fed")
		assert.NotContains(t, cfg.Clusters, "fed")
		assert.NotContains(t, cfg.AuthInfos, "fed")
		assert.Equal(t, "other", cfg.CurrentContext)
	})
}

func TestInitRejectsBadInput(t *testing.T) {
	u := fedenv.NewUser(t, binDir)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"init", "Bad_Name", "--local"}, `federation name "Bad_Name"`},
		{[]string{"init", "fed"}, "--host-cluster-context=CONTEXT is required"},
		{[]string{"init", "fed", "--local", "--host-cluster-context=ctx"}, "--local and --host-cluster-context exclude each other"},
		{[]string{"init", "fed", "--local", "--api-server-port=70000"}, "--api-server-port 70000"},
		{[]string{"init"}, "accepts 1 arg"},
		{[]string{"stop", "nothing-here"}, `no local federation "nothing-here"`},
	}
	for _, tt := range tests {
		out, err := u.Kubefed(tt.args...)
		assert.Error(t, err, "kubefed %v", tt.args)
		assert.Contains(t, out, tt.want, "kubefed %v", tt.args)
	}
	assert.NoDirExists(t, filepath.Join(u.Home, ".federation", "fed"), "a rejected init creates nothing")
}
