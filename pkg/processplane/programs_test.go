package processplane

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAPIServerArgsOfANewPlane: a new plane's apiserver encrypts Secrets
// and writes the audit log with the files init wrote, and keeps them when
// loaded again (kubefed stop, then start).
func TestAPIServerArgsOfANewPlane(t *testing.T) {
	p := createdPlane(t, "fed")
	want := []string{
		"--encryption-provider-config=" + filepath.Join(p.Dir, "pki", "encryption-config.yaml"),
		"--audit-policy-file=" + filepath.Join(p.Dir, "audit-policy.yaml"),
		"--audit-log-path=" + filepath.Join(p.Dir, "logs", "audit.log"),
	}
	args := apiserverArgs(p)
	for _, arg := range want {
		assert.Contains(t, args, arg)
	}
	for _, file := range []string{encryptionConfigFile, auditPolicyFile} {
		assert.FileExists(t, p.path(file))
	}

	loaded, err := Load(p.Dir)
	require.NoError(t, err)
	assert.Equal(t, args, apiserverArgs(loaded), "the same after a restart")
}

// TestAPIServerArgsOfAnOlderPlane: a plane made before init wrote these
// files still starts, without them.
func TestAPIServerArgsOfAnOlderPlane(t *testing.T) {
	dir := t.TempDir()
	state := `{"name": "old", "dir": "` + dir + `", "port": 6443, "server": "https://127.0.0.1:6443",
		"controllerManagerAddress": "127.0.0.1:10253", "processes": {}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, stateFile), []byte(state), 0o600))
	p, err := Load(dir)
	require.NoError(t, err)
	for _, arg := range apiserverArgs(p) {
		assert.NotRegexp(t, "^--(encryption-provider-config|audit-)", arg)
	}
}
