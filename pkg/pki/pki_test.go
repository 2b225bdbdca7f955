package pki

import (
	"crypto/tls"
	"crypto/x509"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIssuedCertificatesVerifyAgainstTheCA(t *testing.T) {
	dir := t.TempDir()
	path := func(n string) string { return filepath.Join(dir, n) }
	ca, err := NewCA("test-ca")
	require.NoError(t, err)
	require.NoError(t, ca.WriteFiles(path("ca.crt"), path("ca.key")))
	loaded, err := LoadCA(path("ca.crt"), path("ca.key"))
	require.NoError(t, err)
	require.NoError(t, loaded.IssueServing(path("s.crt"), path("s.key"), "apiserver", "10.1.2.3", "fed.example.com"))
	require.NoError(t, loaded.IssueClient(path("c.crt"), path("c.key"), "admin", "system:masters"))

	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(ca.CertPEM()))

	serving, err := tls.LoadX509KeyPair(path("s.crt"), path("s.key"))
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(serving.Certificate[0])
	require.NoError(t, err)
	for _, host := range []string{"127.0.0.1", "localhost", "10.1.2.3", "fed.example.com"} {
		_, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots})
		assert.NoError(t, err, "serving certificate for %s", host)
	}
	_, err = leaf.Verify(x509.VerifyOptions{DNSName: "10.9.9.9", Roots: roots})
	assert.Error(t, err, "a host not asked for is not valid")

	client, err := tls.LoadX509KeyPair(path("c.crt"), path("c.key"))
	require.NoError(t, err)
	leaf, err = x509.ParseCertificate(client.Certificate[0])
	require.NoError(t, err)
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	assert.NoError(t, err)
	assert.Equal(t, "admin", leaf.Subject.CommonName)
	assert.Equal(t, []string{"system:masters"}, leaf.Subject.Organization)
}
