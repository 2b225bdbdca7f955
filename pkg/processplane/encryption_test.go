package processplane

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/server/options/encryptionconfig"
	"k8s.io/apiserver/pkg/storage/value"

	"github.com/federation-v1/federation/pkg/pki"
)

// createdPlane is a new plane written to a temporary folder, as init
// leaves it before starting its programs.
func createdPlane(t *testing.T, name string) *Plane {
	t.Helper()
	p, err := New(Options{Name: name, Dir: filepath.Join(t.TempDir(), name)})
	require.NoError(t, err)
	require.NoError(t, p.Create())
	return p
}

// TestEncryptionConfigSealsSecrets: init writes an encryption configuration,
// readable by its owner alone, that the apiserver loads and that seals
// Secrets with secretbox, while values stored in clear stay readable.
func TestEncryptionConfigSealsSecrets(t *testing.T) {
	ctx := context.Background()
	p := createdPlane(t, "fed")
	path := p.path(encryptionConfigFile)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the key is the owner's alone")

	config, err := encryptionconfig.LoadEncryptionConfig(ctx, path, false, "test")
	require.NoError(t, err, "the apiserver accepts the file")
	secrets := config.Transformers[schema.GroupResource{Resource: "secrets"}]
	require.NotNil(t, secrets, "Secrets are encrypted")
	assert.Len(t, config.Transformers, 1, "only Secrets")

	dataCtx := value.DefaultContext("/registry/secrets/default/s")
	sealed, err := secrets.TransformToStorage(ctx, []byte("k8s\x00plaintext-value"), dataCtx)
	require.NoError(t, err)
	assert.Regexp(t, "^k8s:enc:secretbox:v1:"+pki.EncryptionKeyName+":", string(sealed))
	assert.NotContains(t, string(sealed), "plaintext-value")
	opened, stale, err := secrets.TransformFromStorage(ctx, sealed, dataCtx)
	require.NoError(t, err)
	assert.False(t, stale)
	assert.Equal(t, "k8s\x00plaintext-value", string(opened))

	clear, stale, err := secrets.TransformFromStorage(ctx, []byte("k8s\x00stored-before"), dataCtx)
	require.NoError(t, err, "a Secret stored before encryption was on stays readable")
	assert.True(t, stale, "and is sealed when next written")
	assert.Equal(t, "k8s\x00stored-before", string(clear))
}

// TestEncryptionKeyIsNeverReplaced: every plane gets its own key, and
// writing the configuration again (an init retried in the same folder)
// keeps the key the stored Secrets are sealed with.
func TestEncryptionKeyIsNeverReplaced(t *testing.T) {
	p := createdPlane(t, "fed")
	before, err := os.ReadFile(p.path(encryptionConfigFile))
	require.NoError(t, err)

	require.NoError(t, p.writeEncryptionConfig())
	after, err := os.ReadFile(p.path(encryptionConfigFile))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))

	other, err := os.ReadFile(createdPlane(t, "other").path(encryptionConfigFile))
	require.NoError(t, err)
	assert.NotEqual(t, string(before), string(other), "each plane has its own key")
}
