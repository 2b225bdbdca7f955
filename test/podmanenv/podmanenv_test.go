package podmanenv

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/test/buildversion"
)

// TestContainersConf checks that a missing containers.conf is written and
// that an existing one is left as it is.
func TestContainersConf(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	}
	old := containersConfPath
	t.Cleanup(func() { containersConfPath = old })
	containersConfPath = filepath.Join(t.TempDir(), "etc", "containers", "containers.conf")
	path := containersConfPath
	if os.Geteuid() != 0 {
		path = filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "containers", "containers.conf")
	}

	require.NoError(t, ensureContainersConf(t.Logf))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, ContainersConf, string(got))

	mine := "[containers]\nlog_driver = \"k8s-file\"\n"
	require.NoError(t, os.WriteFile(path, []byte(mine), 0o644))
	require.NoError(t, ensureContainersConf(t.Logf))
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, mine, string(got))
}

// TestImage builds the image as `make image` does and checks that every
// binary runs in it (static: the image has no libc), as user 65532, and
// that its kubefed carries the version `make build` gives bin/kubefed.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the image with podman")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	require.NoError(t, Ensure(ctx, t.Logf))
	root := moduleRoot(t)
	ref, err := BuildImage(ctx, root, t.Logf)
	require.NoError(t, err)

	// The same as bin/kubefed of `make build`, built aside.
	ldflags, version, err := buildversion.LDFlags()
	require.NoError(t, err)
	kubefed := filepath.Join(t.TempDir(), "kubefed")
	build := exec.CommandContext(ctx, "go", "build", "-ldflags", ldflags, "-o", kubefed, "./kubefed")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	local := clientVersion(t, exec.CommandContext(ctx, kubefed, "version", "--client", "-o", "json"))
	inImage := clientVersion(t, Podman("run", "--rm", "--network", "host", ref, "/usr/local/bin/kubefed", "version", "--client", "-o", "json"))
	assert.Equal(t, version, inImage.GitVersion)
	assert.Equal(t, local.GitVersion, inImage.GitVersion)
	assert.Equal(t, local.GitCommit, inImage.GitCommit)
	assert.Equal(t, "linux/"+goEnv(t, "GOARCH"), inImage.Platform)
	assert.Equal(t, "localhost/federation:"+version, ref, "tagged with git describe")

	for _, c := range [][]string{
		{"federation-apiserver", "--version"},
		{"federation-controller-manager", "--version"},
		{"federation-dns", "-version"},
		{"etcd", "--version"},
	} {
		out, err := Podman(append([]string{"run", "--rm", "--network", "none", ref, "/usr/local/bin/" + c[0]}, c[1:]...)...).CombinedOutput()
		require.NoError(t, err, "%s in the image: %s", c[0], out)
		if strings.HasPrefix(c[0], "federation-") && c[0] != "federation-dns" {
			assert.Contains(t, string(out), version, c[0])
		}
	}

	out, err = Podman("image", "inspect", "--format", `{{.Config.User}} {{index .Config.Labels "org.opencontainers.image.version"}} {{index .Config.Labels "org.opencontainers.image.licenses"}}`, ref).Output()
	require.NoError(t, err)
	assert.Equal(t, "65532:65532 "+version+" Apache-2.0", strings.TrimSpace(string(out)))
	dev, err := Podman("image", "inspect", "--format", "{{.Id}}", "localhost/federation:dev", ref).Output()
	require.NoError(t, err)
	ids := strings.Fields(string(dev))
	require.Len(t, ids, 2)
	assert.Equal(t, ids[0], ids[1], "localhost/federation:dev is the image just built")

	// Building the same tree again gives the same image (same binaries,
	// every layer reused).
	again, err := BuildImage(ctx, root, t.Logf)
	require.NoError(t, err)
	id, err := Podman("image", "inspect", "--format", "{{.Id}}", again).Output()
	require.NoError(t, err)
	assert.Equal(t, ids[1], strings.TrimSpace(string(id)), "the image built again")
}

// versionInfo is the part of `kubefed version -o json` compared here.
type versionInfo struct {
	GitVersion string `json:"gitVersion"`
	GitCommit  string `json:"gitCommit"`
	Platform   string `json:"platform"`
}

func clientVersion(t *testing.T, cmd *exec.Cmd) versionInfo {
	t.Helper()
	out, err := cmd.Output()
	require.NoError(t, err, "%s", cmd)
	var v struct {
		Client versionInfo `json:"clientVersion"`
	}
	require.NoError(t, json.Unmarshal(out, &v), string(out))
	return v.Client
}

func moduleRoot(t *testing.T) string {
	return filepath.Dir(goEnv(t, "GOMOD"))
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}
