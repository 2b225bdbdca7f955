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

	"github.com/federation-v1/federation/pkg/localprocess"
	"github.com/federation-v1/federation/test/fedenv"
)

// TestLocalFederationInADataDir: a federation made with --data-dir is found
// by its name alone by stop, start and delete, from what init recorded;
// the default folder is never used.
func TestLocalFederationInADataDir(t *testing.T) {
	ctx := context.Background()
	u := fedenv.NewUser(t, binDir)
	dir := filepath.Join(t.TempDir(), "planes", "elsewhere")
	t.Cleanup(func() {
		_, _ = u.Kubefed("delete", "elsewhere", "--local", "--data-dir="+dir)
		for _, p := range localprocess.FindMentioning(dir, fedenv.PlanePrograms()) {
			_ = p.Stop(time.Second)
		}
	})
	registry := filepath.Join(u.Home, ".federation", "registry.json")

	out := u.MustKubefed("init", "elsewhere", "--local", "--data-dir="+dir)
	assert.Contains(t, out, "data folder "+dir+")")
	assert.FileExists(t, filepath.Join(dir, "federation.json"))
	recorded, err := os.ReadFile(registry)
	require.NoError(t, err)
	assert.Contains(t, string(recorded), `"dataDir": "`+dir+`"`)
	k := u.Kubectl()
	_, err = k.Run(ctx, "--context=elsewhere", "create", "namespace", "keep-me")
	require.NoError(t, err)

	// Both ends name the federation's build.
	require.NotEmpty(t, fedenv.Version)
	out = u.MustKubefed("version", "--context=elsewhere")
	assert.Contains(t, out, "Client Version: "+fedenv.Version+" (commit ")
	assert.Contains(t, out, "Server Version: "+fedenv.Version+" (commit ")
	assert.Contains(t, out, "serving the API of Kubernetes 1.36.3")
	assert.Contains(t, u.MustKubefed("--version"), "kubefed "+fedenv.Version+" (commit ")
	for _, program := range []string{"federation-apiserver", "federation-controller-manager"} {
		got, err := exec.Command(filepath.Join(u.Bin, program), "--version").CombinedOutput()
		require.NoError(t, err, "%s --version: %s", program, got)
		assert.True(t, strings.HasPrefix(string(got), program+" "+fedenv.Version+" (commit "), "%s", got)
	}
	got, err := k.Run(ctx, "--context=elsewhere", "version")
	require.NoError(t, err, "kubectl parses the served version")
	assert.Contains(t, got, "Server Version: v1.36.3+federation."+fedenv.Version)

	out = u.MustKubefed("stop", "elsewhere")
	assert.Contains(t, out, `Federation "elsewhere" stopped`)
	assert.Empty(t, localprocess.FindMentioning(dir, fedenv.PlanePrograms()), "stopped")

	out = u.MustKubefed("start", "elsewhere")
	assert.Contains(t, out, "Federation API server is running at: https://127.0.0.1:")
	got, err = k.Run(ctx, "--context=elsewhere", "get", "namespace", "keep-me", "-o", "name")
	require.NoError(t, err)
	assert.Equal(t, "namespace/keep-me", strings.TrimSpace(got), "started again with its data")

	out = u.MustKubefed("delete", "elsewhere", "--local")
	assert.Contains(t, out, `Federation "elsewhere" deleted`)
	assert.NoDirExists(t, dir)
	assert.Empty(t, localprocess.FindMentioning(dir, fedenv.PlanePrograms()))
	recorded, err = os.ReadFile(registry)
	require.NoError(t, err)
	assert.NotContains(t, string(recorded), "elsewhere", "delete forgets it")
	cfg, err := clientcmd.LoadFromFile(u.Kubeconfig)
	require.NoError(t, err)
	assert.NotContains(t, cfg.Contexts, "elsewhere")

	assert.NoDirExists(t, u.PlaneDir("elsewhere"), "the default folder is never used")
	out, err = u.Kubefed("start", "elsewhere")
	require.Error(t, err)
	assert.Contains(t, out, `no local federation "elsewhere": none recorded in `+registry)
}
