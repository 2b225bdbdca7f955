package kubefed_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
)

// secretValue is what the test's Secret holds: it must appear nowhere in
// etcd or in the audit log, in clear or in base64.
const secretValue = "data-at-rest-7c1e0b"

// TestDataAtRest: a federation made by kubefed init stores Secrets
// encrypted in its etcd, still serves them in clear to those allowed, also
// after a restart, and audits their creation without their data.
func TestDataAtRest(t *testing.T) {
	ctx := context.Background()
	u := fedenv.NewUser(t, binDir)
	u.InitFederation("fed")
	dir := u.PlaneDir("fed")
	k := u.Kubectl()

	info, err := os.Stat(filepath.Join(dir, "pki", "encryption-config.yaml"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the key is the owner's alone")

	createSecret := func(name string) {
		t.Helper()
		_, err := k.Run(ctx, "--context=fed", "create", "secret", "generic", name, "--namespace=default", "--from-literal=password="+secretValue)
		require.NoError(t, err)
	}
	readSecret := func(name string) string {
		t.Helper()
		out, err := k.Run(ctx, "--context=fed", "get", "secret", name, "--namespace=default", "-o", "jsonpath={.data.password}")
		require.NoError(t, err)
		value, err := base64.StdEncoding.DecodeString(out)
		require.NoError(t, err, "kubectl printed %q", out)
		return string(value)
	}
	assertSealed := func(name string) {
		t.Helper()
		stored := rawEtcdValue(ctx, t, dir, "/registry/secrets/default/"+name)
		assert.True(t, strings.HasPrefix(stored, "k8s:enc:secretbox:v1:"), "stored encrypted, got %q", truncate(stored))
		assertNoSecretValue(t, stored, "etcd")
	}

	createSecret("before-restart")
	assertSealed("before-restart")
	assert.Equal(t, secretValue, readSecret("before-restart"), "served in clear")
	line := auditLine(ctx, t, dir, "create", "before-restart")
	assert.Contains(t, line, `"level":"Metadata"`)

	u.MustKubefed("stop", "fed")
	u.MustKubefed("start", "fed")
	assert.Equal(t, secretValue, readSecret("before-restart"), "readable with the key kept across a restart")
	createSecret("after-restart")
	assertSealed("after-restart")
	auditLine(ctx, t, dir, "create", "after-restart")

	log, err := os.ReadFile(filepath.Join(dir, "logs", "audit.log"))
	require.NoError(t, err)
	assertNoSecretValue(t, string(log), "the audit log")
}

// rawEtcdValue reads key from the embedded etcd of the plane in dir, past
// the apiserver, on the unix socket it serves its owner.
func rawEtcdValue(ctx context.Context, t *testing.T, dir, key string) string {
	t.Helper()
	socket := filepath.Join(dir, "data", "etcd", "client.sock")
	client, err := clientv3.New(clientv3.Config{
		// The socket file is named client.sock:0 (see pkg/embeddedetcd).
		Endpoints:   []string{"unix://" + socket + ":0"},
		DialTimeout: 10 * time.Second,
		Logger:      zap.NewNop(),
	})
	require.NoError(t, err)
	defer client.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := client.Get(ctx, key)
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1, "%s is in etcd", key)
	return string(resp.Kvs[0].Value)
}

// auditLine waits for the audit log's line of the Secret's verb and returns
// it.
func auditLine(ctx context.Context, t *testing.T, dir, verb, name string) string {
	t.Helper()
	var found string
	require.NoError(t, poll.Until(ctx, 20*time.Second, fmt.Sprintf("the audit log to record %s of Secret %s", verb, name), func(context.Context) error {
		log, err := os.ReadFile(filepath.Join(dir, "logs", "audit.log"))
		if err != nil {
			return err
		}
		scanner := bufio.NewScanner(bytes.NewReader(log))
		scanner.Buffer(nil, 1<<20)
		for scanner.Scan() {
			var event struct {
				Verb      string
				ObjectRef struct{ Resource, Namespace, Name string }
			}
			if json.Unmarshal(scanner.Bytes(), &event) == nil && event.Verb == verb &&
				event.ObjectRef == (struct{ Resource, Namespace, Name string }{"secrets", "default", name}) {
				found = scanner.Text()
				return nil
			}
		}
		return fmt.Errorf("not among %d bytes", len(log))
	}))
	return found
}

func assertNoSecretValue(t *testing.T, data, where string) {
	t.Helper()
	assert.NotContains(t, data, secretValue, "%s holds the Secret's value", where)
	assert.NotContains(t, data, base64.StdEncoding.EncodeToString([]byte(secretValue)), "%s holds the Secret's value in base64", where)
}

// truncate shortens a stored value for a failure message.
func truncate(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
