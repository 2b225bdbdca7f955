package memberenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// e2e.test has its own cache folder beside the control plane's binaries,
// though both come from the kubernetes tools module, and is found there
// once built.
func TestE2ETestIsCachedApart(t *testing.T) {
	assert.Equal(t, "kubernetes-e2e", e2eTest.cacheName())
	assert.Equal(t, "kubernetes", tools[len(tools)-1].cacheName())
	assert.Equal(t, "e2e.test", e2eTest.binary(e2eTest.packages[0]))
	assert.Equal(t, "etcd", tools[0].binary(tools[0].packages[0]), "main packages keep their names")
	assert.Equal(t, "ginkgo", ginkgoCLI.cacheName())
	assert.Equal(t, "ginkgo", ginkgoCLI.binary(ginkgoCLI.packages[0]))

	dir := t.TempDir()
	assert.False(t, haveAll(dir, e2eTest))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "e2e.test"), nil, 0o755))
	assert.True(t, haveAll(dir, e2eTest))
}
