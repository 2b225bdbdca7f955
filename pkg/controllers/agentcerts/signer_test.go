package agentcerts

import (
	"crypto/x509"
	"encoding/pem"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/pki"
)

func TestSignerIssuesTheAgentsClientCertificate(t *testing.T) {
	dir := t.TempDir()
	ca, err := pki.NewCA("agents")
	require.NoError(t, err)
	certFile, keyFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	require.NoError(t, ca.WriteFiles(certFile, keyFile))
	s, err := NewSigner(certFile, keyFile, 10*time.Minute)
	require.NoError(t, err)
	s.now = func() time.Time { return now }

	user, group := bootstrapUser("aaaaaa")
	csr := csrFor(t, x509.CertificateRequest{Subject: agentSubject("edge1")}, user, group)
	seconds := int32(3600)
	csr.Spec.ExpirationSeconds = &seconds // longer than the duration: ignored
	out, err := s.Sign(csr)
	require.NoError(t, err)
	block, _ := pem.Decode(out)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	assert.Equal(t, federationv1beta1.AgentUser("edge1"), cert.Subject.CommonName)
	assert.Equal(t, []string{federationv1beta1.AgentGroup}, cert.Subject.Organization)
	assert.Equal(t, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, cert.ExtKeyUsage)
	assert.False(t, cert.IsCA)
	assert.Equal(t, now.Add(10*time.Minute), cert.NotAfter.UTC(), "the configured duration")
	assert.NoError(t, cert.CheckSignatureFrom(ca.Cert))

	seconds = 120
	assert.Equal(t, 2*time.Minute, s.ttl(&seconds), "a shorter request is honoured")
	seconds = 1
	assert.Equal(t, minDuration, s.ttl(&seconds))

	_, err = NewSigner(certFile, keyFile, time.Second)
	assert.ErrorContains(t, err, "at least")
}
