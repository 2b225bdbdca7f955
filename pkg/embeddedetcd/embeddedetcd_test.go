package embeddedetcd

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestDataSurvivesRestart writes a key, restarts the etcd on the same
// directory and reads the key back, serving clients on the unix socket and
// on a TCP port.
func TestDataSurvivesRestart(t *testing.T) {
	t.Run("unix socket", func(t *testing.T) { dataSurvivesRestart(t, 0, "unix://") })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	t.Run("TCP port", func(t *testing.T) { dataSurvivesRestart(t, port, fmt.Sprintf("http://127.0.0.1:%d", port)) })
}

func dataSurvivesRestart(t *testing.T, port int, wantURL string) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	withClient := func(do func(*clientv3.Client)) {
		s, err := Start(dir, port)
		require.NoError(t, err)
		defer s.Stop()
		assert.Contains(t, s.ClientURL(), wantURL)
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
