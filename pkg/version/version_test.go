package version

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	utilversion "k8s.io/apimachinery/pkg/util/version"
)

func set(t *testing.T, version, commit, tree, date string) {
	old := []string{gitVersion, gitCommit, gitTreeState, buildDate}
	gitVersion, gitCommit, gitTreeState, buildDate = version, commit, tree, date
	t.Cleanup(func() { gitVersion, gitCommit, gitTreeState, buildDate = old[0], old[1], old[2], old[3] })
}

func TestServedIsAKubernetesVersionKubectlParses(t *testing.T) {
	for _, tt := range []struct{ describe, meta string }{
		{"v0.4.0", "v0.4.0"},
		{"v0.4.0-3-g56e1a36-dirty", "v0.4.0-3-g56e1a36-dirty"},
		{"56e1a36", "56e1a36"},
		{"", "v0.0.0-unknown"},
		{"release/v1_2..x.", "release-v1-2.x"},
		{"...", "unknown"},
	} {
		set(t, tt.describe, "", "", "")
		served := Served()
		assert.Equal(t, "v1.36.3+federation."+tt.meta, served)
		// As kubectl's version skew check parses it.
		v, err := utilversion.ParseSemantic(served)
		require.NoError(t, err, served)
		assert.Equal(t, "1.36.3", strings.SplitN(v.String(), "+", 2)[0])
		fed, ok := FromServed(served)
		assert.True(t, ok)
		assert.Equal(t, tt.meta, fed)
	}
	_, ok := FromServed("v1.36.3")
	assert.False(t, ok, "kube-apiserver's")
}

func TestGetAndString(t *testing.T) {
	set(t, "", "", "", "")
	assert.Equal(t, Unknown, Get().GitVersion, "built without the ldflags")
	assert.True(t, strings.HasPrefix(String(), Unknown+" (Kubernetes 1.36.3, go"), String())

	set(t, "v0.4.0-dirty", "56e1a36aaaa", "dirty", "2026-11-23T20:00:00Z")
	info := Get()
	assert.Equal(t, "v0.4.0-dirty", info.GitVersion)
	assert.Equal(t, "56e1a36aaaa", info.GitCommit)
	assert.Equal(t, "2026-11-23T20:00:00Z", info.BuildDate)
	assert.True(t, strings.HasPrefix(String(), "v0.4.0-dirty (commit 56e1a36aaaa, tree dirty, built 2026-11-23T20:00:00Z, Kubernetes 1.36.3, go"), String())
}

func TestVersionFlag(t *testing.T) {
	set(t, "v0.4.0", "56e1a36", "clean", "")
	run := func(args ...string) (out string, ran bool) {
		cmd := &cobra.Command{Use: "prog", Run: func(*cobra.Command, []string) { ran = true }}
		cmd.Flags().IntP("v", "v", 0, "log verbosity, as klog's")
		AddFlag(cmd)
		var buf bytes.Buffer
		cmd.SetOut(&buf)
		cmd.SetArgs(args)
		require.NoError(t, cmd.Execute())
		return buf.String(), ran
	}
	out, ran := run("--version")
	assert.False(t, ran)
	assert.True(t, strings.HasPrefix(out, "prog v0.4.0 (commit 56e1a36, tree clean, Kubernetes 1.36.3, go"), out)

	out, ran = run("-v", "2")
	assert.True(t, ran, "-v stays the verbosity")
	assert.Empty(t, out)
}
