package memberenv

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each Flux controller is cached by its own module's version, pinned in the
// flux tools module, under its own folder.
func TestFluxControllersAreCachedByTheirOwnVersions(t *testing.T) {
	root, err := RepoRoot()
	require.NoError(t, err)
	controllers := []tool{sourceController, kustomizeController}
	names := map[string]bool{}
	for _, c := range controllers {
		version, err := requiredVersion(filepath.Join(root, "test", "tools", c.dir, "go.mod"), c.module)
		require.NoError(t, err, c.module)
		assert.Regexp(t, `^v\d+\.\d+\.\d+$`, version, c.module)
		assert.Equal(t, filepath.Base(c.module), c.binary(c.packages[0]))
		names[c.cacheName()] = true
	}
	assert.Len(t, names, len(controllers), "one cache folder each")
}
