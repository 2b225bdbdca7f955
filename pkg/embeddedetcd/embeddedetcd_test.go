package embeddedetcd

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestDataSurvivesRestart writes a key, restarts the etcd on the same
// directory and reads the key back.
func TestDataSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	withClient := func(do func(*clientv3.Client)) {
		s, err := Start(dir)
		require.NoError(t, err)
		defer s.Stop()
		client, err := clientv3.New(clientv3.Config{Endpoints: []string{s.ClientURL()}, DialTimeout: 10 * time.Second})
		require.NoError(t, err)
		defer client.Close()
		do(client)
	}
	withClient(func(c *clientv3.Client) {
		_, err := c.Put(ctx, "/registry/kept", "value")
		require.NoError(t, err)
	})
	withClient(func(c *clientv3.Client) {
		resp, err := c.Get(ctx, "/registry/kept")
		require.NoError(t, err)
		require.Len(t, resp.Kvs, 1)
		assert.Equal(t, "value", string(resp.Kvs[0].Value))
	})

	info, err := os.Stat(filepath.Join(dir, "etcd"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm(), "only the owner reaches the socket")
}
