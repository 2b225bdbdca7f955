package processplane

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A plane's apiservers, one or two (--ha), sign and verify service-account
// tokens with the one key made at init; a plane made before it gets it at
// start.
func TestServiceAccountKeyIsSharedByEveryAPIServer(t *testing.T) {
	p := createdPlane(t, "fed")
	flag := "--service-account-signing-key-file=" + p.path(serviceAccountKey)
	assert.Contains(t, apiserverArgs(p), flag)
	assert.Contains(t, haAPIServerArgs(p, 0), flag)
	assert.Contains(t, haAPIServerArgs(p, 1), flag)
	info, err := os.Stat(p.path(serviceAccountKey))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	first, err := os.ReadFile(p.path(serviceAccountKey))
	require.NoError(t, err)
	require.NoError(t, p.ensureFiles())
	again, err := os.ReadFile(p.path(serviceAccountKey))
	require.NoError(t, err)
	assert.Equal(t, first, again, "kept across starts")

	require.NoError(t, os.Remove(p.path(serviceAccountKey)))
	require.NoError(t, p.ensureFiles())
	assert.FileExists(t, p.path(serviceAccountKey))
}
