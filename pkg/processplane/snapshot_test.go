package processplane

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/federation-v1/federation/pkg/embeddedetcd"
)

// withEtcd runs the embedded etcd of the plane in dir, as the apiserver
// does, for do.
func withEtcd(t *testing.T, dir string, do func(*clientv3.Client)) {
	t.Helper()
	s, err := embeddedetcd.Start(filepath.Join(dir, dataFolder), 0)
	require.NoError(t, err)
	defer s.Stop()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{s.ClientURL()}, DialTimeout: 10 * time.Second})
	require.NoError(t, err)
	defer client.Close()
	do(client)
}

func TestSnapshotRestoresIntoTheEmbeddedEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd")
	}
	ctx := context.Background()
	dir := t.TempDir()
	p := &Plane{Options: Options{Name: "fed", Dir: dir}}
	file := filepath.Join(t.TempDir(), "fed.snapshot")
	withEtcd(t, dir, func(c *clientv3.Client) {
		_, err := c.Put(ctx, "/registry/kept", "before")
		require.NoError(t, err)
		stream, err := c.Snapshot(ctx)
		require.NoError(t, err)
		defer stream.Close()
		require.NoError(t, writeFileAtomic(file, stream))
		_, err = c.Put(ctx, "/registry/after-backup", "after")
		require.NoError(t, err)
	})
	st, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the snapshot holds the federation's whole state")
	info, err := snapshotStatus(file)
	require.NoError(t, err)
	assert.Positive(t, info.TotalKeys)

	aside, err := p.Restore(file, time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "data.before-restore-20300102T030405Z"), aside)
	assert.DirExists(t, filepath.Join(aside, etcdFolder, "member"), "the former data is kept")

	withEtcd(t, dir, func(c *clientv3.Client) {
		resp, err := c.Get(ctx, "/registry/kept")
		require.NoError(t, err)
		require.Len(t, resp.Kvs, 1, "the snapshot's keys are back")
		assert.Equal(t, "before", string(resp.Kvs[0].Value))
		resp, err = c.Get(ctx, "/registry/after-backup")
		require.NoError(t, err)
		assert.Empty(t, resp.Kvs, "what came after the snapshot is not")
		assert.Greater(t, resp.Header.Revision, int64(restoreRevisionBump), "revisions only grow")
	})
}

func TestRestoreOfABadFileKeepsTheData(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, dataFolder, etcdFolder), 0o700))
	bad := filepath.Join(dir, "bad.snapshot")
	require.NoError(t, os.WriteFile(bad, []byte("not a snapshot"), 0o600))
	p := &Plane{Options: Options{Name: "fed", Dir: dir}}
	_, err := p.Restore(bad, time.Now())
	require.ErrorContains(t, err, "not a valid etcd snapshot")
	assert.DirExists(t, filepath.Join(dir, dataFolder, etcdFolder))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "nothing moved or left behind")
}

func TestBackupAndRestoreRefuseAnExternalEtcd(t *testing.T) {
	p := &Plane{Options: Options{Name: "fed", Dir: t.TempDir(), EtcdServers: []string{"https://etcd:2379"}}}
	_, err := p.Backup(context.Background(), filepath.Join(t.TempDir(), "f"))
	require.ErrorIs(t, err, ErrExternalEtcd)
	assert.ErrorContains(t, err, "that etcd's own tools")
	_, err = p.Restore("f", time.Now())
	require.ErrorIs(t, err, ErrExternalEtcd)
}

func TestBackupOfAStoppedPlaneSaysToStartIt(t *testing.T) {
	p := &Plane{Options: Options{Name: "fed", Dir: t.TempDir()}}
	_, err := p.Backup(context.Background(), filepath.Join(t.TempDir(), "f"))
	require.ErrorContains(t, err, "kubefed start fed")
}
