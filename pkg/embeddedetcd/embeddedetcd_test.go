package embeddedetcd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/federation-v1/federation/pkg/pki"
)

// TestDataSurvivesRestart writes a key, restarts the etcd on the same
// directory and reads the key back, serving clients on the unix socket and
// on a TCP port.
func TestDataSurvivesRestart(t *testing.T) {
	t.Run("unix socket", func(t *testing.T) {
		dataSurvivesRestart(t, 0, func(s *Server) string {
			assert.Empty(t, s.PortURL())
			return s.ClientURL()
		})
	})
	port := freePort(t)
	t.Run("TCP port", func(t *testing.T) {
		dataSurvivesRestart(t, port, func(s *Server) string {
			assert.Equal(t, fmt.Sprintf("http://127.0.0.1:%d", port), s.PortURL())
			return s.PortURL()
		})
	})
}

func dataSurvivesRestart(t *testing.T, port int, endpoint func(*Server) string) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	withClient := func(do func(*clientv3.Client)) {
		s, err := Start(dir, port)
		require.NoError(t, err)
		defer s.Stop()
		assert.True(t, strings.HasPrefix(s.ClientURL(), "unix://"), "the socket always serves: %s", s.ClientURL())
		client, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint(s)}, DialTimeout: 10 * time.Second})
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

// TestClientTLS: with ClientTLS the TCP port serves only clients with a
// certificate of the client CA; the unix socket still serves the owner.
func TestClientTLS(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	ca, err := pki.NewCA("etcd-ca")
	require.NoError(t, err)
	require.NoError(t, ca.WriteFiles(path("ca.crt"), path("ca.key")))
	require.NoError(t, ca.IssueServing(path("server.crt"), path("server.key"), "etcd"))
	require.NoError(t, ca.IssueClient(path("client.crt"), path("client.key"), "federation-dns"))
	other, err := pki.NewCA("other-ca")
	require.NoError(t, err)
	require.NoError(t, other.IssueClient(path("stranger.crt"), path("stranger.key"), "federation-dns"))

	port := freePort(t)
	s, err := StartWithOptions(filepath.Join(dir, "data"), Options{
		ClientPort: port,
		ClientTLS:  &ClientTLS{CertFile: path("server.crt"), KeyFile: path("server.key"), CAFile: path("ca.crt")},
	})
	require.NoError(t, err)
	defer s.Stop()
	require.Equal(t, fmt.Sprintf("https://127.0.0.1:%d", port), s.PortURL())
	addr := strings.TrimPrefix(s.PortURL(), "https://")

	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(ca.CertPEM()))
	// withCert always presents the certificate, also one the server's CA
	// list does not name (Go's client would then send none).
	withCert := func(name string) *tls.Config {
		cert, err := tls.LoadX509KeyPair(path(name+".crt"), path(name+".key"))
		require.NoError(t, err)
		return &tls.Config{RootCAs: roots, GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return &cert, nil
		}}
	}

	t.Run("a certificate of the CA is served", func(t *testing.T) {
		c := client(t, s.PortURL(), withCert("client"))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := c.Put(ctx, "/skydns/com/example/x", `{"host":"1.2.3.4"}`)
		require.NoError(t, err)
		resp, err := c.Get(ctx, "/skydns/com/example/x")
		require.NoError(t, err)
		require.Len(t, resp.Kvs, 1)
	})
	t.Run("no certificate is refused", func(t *testing.T) {
		assert.ErrorContains(t, handshake(addr, &tls.Config{RootCAs: roots}), "certificate required")
		assert.Error(t, get(t, client(t, s.PortURL(), &tls.Config{RootCAs: roots})))
	})
	t.Run("a certificate of another CA is refused", func(t *testing.T) {
		assert.ErrorContains(t, handshake(addr, withCert("stranger")), "unknown certificate authority")
		assert.Error(t, get(t, client(t, s.PortURL(), withCert("stranger"))))
	})
	t.Run("plain HTTP and gRPC get nothing", func(t *testing.T) {
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/version")
		if err == nil {
			resp.Body.Close()
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "only the TLS server's complaint")
		}
		assert.Error(t, get(t, client(t, "http://"+addr, nil)))
	})
	t.Run("the unix socket serves its owner", func(t *testing.T) {
		assert.NoError(t, get(t, client(t, s.ClientURL(), nil)))
	})
}

func TestClientTLSNeedsEveryFile(t *testing.T) {
	_, err := StartWithOptions(t.TempDir(), Options{ClientPort: freePort(t), ClientTLS: &ClientTLS{CertFile: "server.crt", KeyFile: "server.key"}})
	assert.ErrorContains(t, err, "client CA")
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

func client(t *testing.T, endpoint string, tlsConfig *tls.Config) *clientv3.Client {
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, TLS: tlsConfig, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// get reads a key, giving up after a few seconds: a refused client retries
// until then.
func get(t *testing.T, c *clientv3.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := c.Get(ctx, "/registry/anything")
	return err
}

// handshake dials addr over TLS and reads: with TLS 1.3 the server refuses
// a client's certificate after the client's side of the handshake, so the
// refusal comes with the first read. An accepted client reads nothing until
// the deadline.
func handshake(addr string, cfg *tls.Config) error {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return err
	}
	_, err = conn.Read(make([]byte, 1))
	return err
}
