package karmadaenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckSaysWhatIsMissing(t *testing.T) {
	err := Check("", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "KARMADA_BIN is not set")
	assert.Contains(t, err.Error(), "KARMADA_SRC is not set")

	bin, src := t.TempDir(), t.TempDir()
	for _, p := range karmadaPrograms[1:] {
		require.NoError(t, os.WriteFile(filepath.Join(bin, p), nil, 0o755))
	}
	for _, f := range []string{crdKustomization, namespaceManifest, webhookManifest, apiServiceManifest} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(src, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(src, f), nil, 0o644))
	}
	err = Check(bin, src)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no program "+filepath.Join(bin, AggregatedAPIServer))
	assert.NotContains(t, err.Error(), "in KARMADA_SRC", "the source tree is complete")

	require.NoError(t, os.WriteFile(filepath.Join(bin, AggregatedAPIServer), nil, 0o755))
	assert.NoError(t, Check(bin, src))
}
