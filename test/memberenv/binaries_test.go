package memberenv

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEnsureToolNamesTheBinary builds the smallest tool, etcd, into an empty
// cache: its binary must be named etcd although go would call it "server".
func TestEnsureToolNamesTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds etcd")
	}
	root, err := RepoRoot()
	require.NoError(t, err)
	cache := t.TempDir()
	dir, err := ensureTool(context.Background(), root, cache, tools[0], t.Logf)
	require.NoError(t, err)
	version, err := requiredVersion(filepath.Join(root, "test", "tools", "etcd", "go.mod"), tools[0].module)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(cache, "etcd-"+version), dir, "the cache folder is keyed by version")
	info, err := os.Stat(filepath.Join(dir, "etcd"))
	require.NoError(t, err)
	assert.NotZero(t, info.Mode()&0o111, "etcd is executable")
	assert.True(t, haveAll(dir, tools[0]), "a second call finds it cached")
}

// A long build says it is still going, with the time so far, until it
// ends: stop returns once the ticker's goroutine has ended, so nothing is
// said after.
func TestEveryTicksUntilStopped(t *testing.T) {
	var mu sync.Mutex
	var ticks []time.Duration
	stop := every(5*time.Millisecond, func(elapsed time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		ticks = append(ticks, elapsed)
	})
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(ticks) >= 3
	}, 5*time.Second, time.Millisecond)
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("stop did not return")
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Less(t, ticks[0], ticks[len(ticks)-1], "the elapsed time grows")
}
