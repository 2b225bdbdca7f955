package app

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/storage/value"
	api "k8s.io/kubernetes/pkg/apis/core"
)

const testEncryptionConfig = `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: ["secrets"]
  providers:
  - secretbox:
      keys:
      - name: key1
        secret: MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=
  - identity: {}
`

const testAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
`

// TestEncryptionAndAuditFlags: --encryption-provider-config seals the
// Secrets the registry stores (not only the transformers of the generic
// config), and --audit-policy-file with --audit-log-path turns the audit
// log on.
func TestEncryptionAndAuditFlags(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		return path
	}
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	require.NoError(t, fs.Parse([]string{
		"--data-dir=" + dir,
		"--etcd-servers=http://127.0.0.1:1",
		"--encryption-provider-config=" + write("encryption.yaml", testEncryptionConfig),
		"--audit-policy-file=" + write("policy.yaml", testAuditPolicy),
		"--audit-log-path=" + filepath.Join(dir, "logs", "audit.log"),
	}))
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer listener.Close()
	o.SecureServing.Listener = listener
	require.NoError(t, o.Complete())
	require.NoError(t, o.Validate())

	config, err := o.Config()
	require.NoError(t, err)
	generic := config.GenericConfig.Config
	assert.NotNil(t, generic.AuditBackend, "audit log on")
	assert.NotNil(t, generic.AuditPolicyRuleEvaluator)
	assert.FileExists(t, filepath.Join(dir, "logs", "audit.log"))

	opts, err := generic.RESTOptionsGetter.GetRESTOptions(schema.GroupResource{Resource: "secrets"}, &api.Secret{})
	require.NoError(t, err)
	ctx, dataCtx := context.Background(), value.DefaultContext("/registry/secrets/default/s")
	stored, err := opts.StorageConfig.Transformer.TransformToStorage(ctx, []byte("plaintext"), dataCtx)
	require.NoError(t, err)
	assert.Regexp(t, "^k8s:enc:secretbox:v1:key1:", string(stored), "the secrets registry encrypts")

	opts, err = generic.RESTOptionsGetter.GetRESTOptions(schema.GroupResource{Resource: "configmaps"}, &api.ConfigMap{})
	require.NoError(t, err)
	stored, err = opts.StorageConfig.Transformer.TransformToStorage(ctx, []byte("plaintext"), dataCtx)
	require.NoError(t, err)
	assert.Equal(t, "plaintext", string(stored), "other resources as configured: in clear")
}

func TestAuditFlagsValidated(t *testing.T) {
	o := NewOptions()
	o.Audit.LogOptions.Path = filepath.Join(t.TempDir(), "audit.log")
	o.Audit.LogOptions.MaxAge = -1
	require.NoError(t, o.Complete())
	err := o.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "audit-log-maxage")
}
