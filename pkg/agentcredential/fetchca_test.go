package agentcredential

import (
	"bytes"
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/pki"
)

// server serves TLS with a leaf of ca, followed by the PEM of presents.
func server(t *testing.T, ca *pki.CA, presents ...*pki.CA) string {
	t.Helper()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	require.NoError(t, ca.IssueServing(certFile, keyFile, "federation-apiserver"))
	chain, err := os.ReadFile(certFile)
	require.NoError(t, err)
	for _, p := range presents {
		chain = append(chain, p.CertPEM()...)
	}
	require.NoError(t, os.WriteFile(certFile, chain, 0o600))
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	require.NoError(t, err)
	s := httptest.NewUnstartedServer(http.NotFoundHandler())
	s.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s.URL
}

func TestFetchCA(t *testing.T) {
	ctx := context.Background()
	ca, err := pki.NewCA("federation-ca")
	require.NoError(t, err)
	other, err := pki.NewCA("other-ca")
	require.NoError(t, err)
	pin := Hash(ca.Cert)
	url := server(t, ca, ca)

	got, err := FetchCA(ctx, url, pin)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(ca.CertPEM(), got), "the pinned CA")

	_, err = FetchCA(ctx, url, Hash(other.Cert))
	assert.ErrorContains(t, err, "--ca-cert-hash")

	_, err = FetchCA(ctx, url, "sha256:abc")
	assert.ErrorContains(t, err, "--ca-cert-hash")

	_, err = FetchCA(ctx, server(t, ca), pin)
	assert.ErrorContains(t, err, "only its own certificate")

	// A server of another CA that presents the pinned CA (which is public)
	// is not the federation: its certificate does not verify against it.
	_, err = FetchCA(ctx, server(t, other, ca), pin)
	assert.ErrorContains(t, err, "is not one of the CA of --ca-cert-hash")
}
