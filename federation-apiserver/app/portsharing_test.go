package app

import (
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/rest"
)

// TestOwnLoopback: a server sharing its port serves its loopback client on
// a listener of its own, and its clients on the shared one, through the
// one listener the generic server runs; its address stays the shared one,
// and closing it closes both.
func TestOwnLoopback(t *testing.T) {
	shared, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	serving := &genericapiserver.SecureServingInfo{Listener: shared}
	loopback := &rest.Config{Host: "https://" + shared.Addr().String()}
	require.NoError(t, ownLoopback(serving, loopback))

	assert.Equal(t, shared.Addr(), serving.Listener.Addr(), "the server's address is the shared one")
	private := strings.TrimPrefix(loopback.Host, "https://")
	assert.NotEqual(t, shared.Addr().String(), private, "the loopback client has an address of its own")
	for _, addr := range []string{shared.Addr().String(), private} {
		client, err := net.Dial("tcp", addr)
		require.NoError(t, err, addr)
		conn, err := serving.Listener.Accept()
		require.NoError(t, err, "a connection to %s is accepted", addr)
		assert.Equal(t, client.LocalAddr().String(), conn.RemoteAddr().String())
		client.Close()
		conn.Close()
	}

	require.NoError(t, serving.Listener.Close())
	_, err = serving.Listener.Accept()
	assert.ErrorIs(t, err, net.ErrClosed)
	for _, addr := range []string{shared.Addr().String(), private} {
		_, err := net.Dial("tcp", addr)
		assert.Error(t, err, "%s is closed", addr)
	}
}
