package apiserver

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRestart stops a server and starts it again on the same --data-dir:
// the objects created before are still there, unchanged.
func TestRestart(t *testing.T) {
	dir, dataDir := t.TempDir(), filepath.Join(t.TempDir(), "data")
	first, err := startServer(dir, dataDir)
	require.NoError(t, err)
	t.Cleanup(first.stop)

	k := newKubectl(t, kubectls[len(kubectls)-1], first.tokenConfig)
	k.must(t, "", "create", "namespace", "persisted")
	k.must(t, "", "-n", "persisted", "create", "configmap", "kept", "--from-literal=a=b")
	k.must(t, tutorialDeployment, "-n", "persisted", "create", "-f", "-")
	k.must(t, fmtManifest("clusters.federation", "kept-cluster", ""), "create", "-f", "-")
	objects := [][3]string{
		{"namespaces", "", "persisted"},
		{"configmaps", "persisted", "kept"},
		{"deployments.apps", "persisted", "nginx-deployment"},
		{"clusters.federation", "", "kept-cluster"},
	}
	uids := map[string]string{}
	for _, o := range objects {
		uids[o[2]] = k.jsonpath(t, o[0], o[1], o[2], ".metadata.uid")
	}
	first.stop()

	second, err := startServer(dir, dataDir)
	require.NoError(t, err)
	t.Cleanup(second.stop)
	k = newKubectl(t, kubectls[len(kubectls)-1], second.tokenConfig)
	for _, o := range objects {
		assert.Equal(t, uids[o[2]], k.jsonpath(t, o[0], o[1], o[2], ".metadata.uid"), "%s %s after restart", o[0], o[2])
	}
	assert.Equal(t, "b", k.jsonpath(t, "configmaps", "persisted", "kept", ".data.a"))
}
