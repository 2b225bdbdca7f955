package freeport

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func withEphemeralRange(t *testing.T, content string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "ip_local_port_range")
	require.NoError(t, os.WriteFile(file, []byte(content), 0o600))
	old := ephemeralRangeFile
	ephemeralRangeFile = file
	t.Cleanup(func() { ephemeralRangeFile = old })
}

func TestPortsAreDistinctAndBelowTheEphemeralRange(t *testing.T) {
	withEphemeralRange(t, "32768\t60999\n")
	seen := map[int]bool{}
	for range 100 {
		port, err := Pick("127.0.0.1")
		require.NoError(t, err)
		assert.GreaterOrEqual(t, port, lowest)
		assert.Less(t, port, 32768)
		assert.False(t, seen[port], "port %d handed out twice", port)
		seen[port] = true
	}
}

func TestABoundPortIsNotPicked(t *testing.T) {
	// The range below the ephemeral one is 3 ports: hold them all (or find
	// them taken already), so that Pick must go to the kernel.
	withEphemeralRange(t, strconv.Itoa(lowest+3)+" 60999")
	for port := lowest; port < lowest+3; port++ {
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			t.Cleanup(func() { _ = l.Close() })
		}
	}
	port, err := Pick("127.0.0.1")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, port, lowest+3)
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	require.NoError(t, err, "the port picked is free")
	_ = l.Close()
}

func TestWithoutAnEphemeralRangeTheKernelPicks(t *testing.T) {
	withEphemeralRange(t, "not a range")
	port, err := Pick("127.0.0.1")
	require.NoError(t, err)
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	require.NoError(t, err, "the port picked is free")
	_ = l.Close()
}
