package processplane

import (
	"crypto/x509"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certutil "k8s.io/client-go/util/cert"
)

// A new plane has an agents CA of its own, which its apiserver trusts for
// agents and its controller manager signs with, and a serving certificate
// file that holds the CA after the certificate (agents pin the CA).
func TestAgentsCAOfANewPlane(t *testing.T) {
	p := createdPlane(t, "fed")
	assert.Contains(t, apiserverArgs(p), "--agent-client-ca-file="+p.path(agentsCACert))
	cm := controllerManagerArgs(p, p.ControllerManagerAddress)
	assert.Contains(t, cm, "--agent-signing-cert-file="+p.path(agentsCACert))
	assert.Contains(t, cm, "--agent-signing-key-file="+p.path(agentsCAKey))

	agents, err := certutil.CertsFromFile(p.path(agentsCACert))
	require.NoError(t, err)
	main, err := certutil.CertsFromFile(p.path(caCert))
	require.NoError(t, err)
	assert.NotEqual(t, main[0].Raw, agents[0].Raw, "not the main CA")
	info, err := os.Stat(p.path(agentsCAKey))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	chain, err := certutil.CertsFromFile(p.path(servingCert))
	require.NoError(t, err)
	require.Len(t, chain, 2, "the serving certificate, then its CA")
	assert.Equal(t, main[0].Raw, chain[1].Raw)
	_, err = chain[0].Verify(x509.VerifyOptions{Roots: pool(main[0]), DNSName: "localhost"})
	assert.NoError(t, err)
}

// A plane made before agents gets the agents CA and the chain at start,
// once.
func TestAgentsCAOfAnOlderPlane(t *testing.T) {
	p := createdPlane(t, "fed")
	require.NoError(t, os.Remove(p.path(agentsCACert)))
	require.NoError(t, os.Remove(p.path(agentsCAKey)))
	chain, err := certutil.CertsFromFile(p.path(servingCert))
	require.NoError(t, err)
	leaf, err := certutil.EncodeCertificates(chain[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p.path(servingCert), leaf, 0o600))

	require.NoError(t, p.ensureAgentCredentials())
	assert.FileExists(t, p.path(agentsCACert))
	assert.FileExists(t, p.path(agentsCAKey))
	first, err := os.ReadFile(p.path(agentsCACert))
	require.NoError(t, err)
	chain, err = certutil.CertsFromFile(p.path(servingCert))
	require.NoError(t, err)
	assert.Len(t, chain, 2)

	require.NoError(t, p.ensureAgentCredentials())
	again, err := os.ReadFile(p.path(agentsCACert))
	require.NoError(t, err)
	assert.Equal(t, first, again, "kept")
	chain, err = certutil.CertsFromFile(p.path(servingCert))
	require.NoError(t, err)
	assert.Len(t, chain, 2, "the CA once")
}

func pool(c *x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c)
	return p
}
