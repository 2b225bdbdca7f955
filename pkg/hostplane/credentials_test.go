package hostplane

import (
	"crypto/x509"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

func parseCert(t *testing.T, pem []byte) *x509.Certificate {
	t.Helper()
	certs, err := certutil.ParseCertsPEM(pem)
	require.NoError(t, err)
	return certs[0]
}

func verifies(t *testing.T, c *x509.Certificate, caPEM []byte, usage x509.ExtKeyUsage) error {
	t.Helper()
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(caPEM))
	_, err := c.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{usage}})
	return err
}

func TestIssueCredentials(t *testing.T) {
	values := map[string]any{"apiserver": map[string]any{"extraSANs": []any{"127.1.1.5", "fed.example.com"}, "service": map[string]any{"port": int64(443)}}}
	l := NewLayout("fed", "federation-system", values)
	creds, err := IssueCredentials(l, nil)
	require.NoError(t, err)
	for _, k := range SecretKeys {
		assert.NotEmpty(t, creds.Data[k], k)
	}
	assert.Len(t, creds.Data, len(SecretKeys), "the admin's key is not in the Secret")

	apiserver := parseCert(t, creds.Data[KeyAPIServerCert])
	for _, h := range []string{"fed-apiserver", "fed-apiserver.federation-system", "fed-apiserver.federation-system.svc",
		"fed-apiserver.federation-system.svc.cluster.local", "127.0.0.1", "localhost", "127.1.1.5", "fed.example.com"} {
		assert.NoError(t, apiserver.VerifyHostname(h), h)
	}
	assert.NoError(t, verifies(t, apiserver, creds.Data[KeyCA], x509.ExtKeyUsageServerAuth))

	cm, err := clientcmd.Load(creds.Data[KeyControllerManagerKubeconfig])
	require.NoError(t, err)
	ctx := cm.Contexts[cm.CurrentContext]
	require.NotNil(t, ctx)
	assert.Equal(t, "https://fed-apiserver.federation-system.svc:443", cm.Clusters[ctx.Cluster].Server)
	assert.Equal(t, creds.Data[KeyCA], cm.Clusters[ctx.Cluster].CertificateAuthorityData)
	cmCert := parseCert(t, cm.AuthInfos[ctx.AuthInfo].ClientCertificateData)
	assert.Equal(t, federationv1beta1.ControllerManagerUser, cmCert.Subject.CommonName)
	assert.NoError(t, verifies(t, cmCert, creds.Data[KeyCA], x509.ExtKeyUsageClientAuth))

	admin := parseCert(t, creds.AdminCert)
	assert.Equal(t, []string{"system:masters"}, admin.Subject.Organization)
	assert.NoError(t, SignedBy(creds.AdminCert, creds.Data[KeyCA]))
	assert.NotEmpty(t, creds.AdminKey)

	etcd := parseCert(t, creds.Data[KeyEtcdServerCert])
	assert.NoError(t, etcd.VerifyHostname("fed-etcd.federation-system.svc"))
	assert.NoError(t, etcd.VerifyHostname("fed-etcd-0.fed-etcd.federation-system.svc"))
	assert.NoError(t, verifies(t, etcd, creds.Data[KeyEtcdCA], x509.ExtKeyUsageServerAuth))
	assert.NoError(t, verifies(t, etcd, creds.Data[KeyEtcdCA], x509.ExtKeyUsageClientAuth), "etcd's peers authenticate with it too")
	etcdClient := parseCert(t, creds.Data[KeyEtcdClientCert])
	assert.NoError(t, verifies(t, etcdClient, creds.Data[KeyEtcdCA], x509.ExtKeyUsageClientAuth))
	assert.Error(t, verifies(t, etcdClient, creds.Data[KeyCA], x509.ExtKeyUsageClientAuth), "the etcd CA is not the federation's: its users cannot read etcd")
	assert.Error(t, SignedBy(creds.AdminCert, creds.Data[KeyEtcdCA]))
	assert.Contains(t, string(creds.Data[KeyEncryptionConfig]), "secretbox")

	admincfg := creds.AdminKubeconfig("fed", "https://127.1.1.5:443")
	assert.Equal(t, "https://127.1.1.5:443", admincfg.Clusters["fed"].Server)
	assert.Equal(t, "fed", admincfg.Contexts["fed"].AuthInfo)

	// A second init finds them fit, unless a host is missing.
	assert.NoError(t, Reusable(creds.Data, l))
	moved := NewLayout("fed", "federation-system", map[string]any{"apiserver": map[string]any{"extraSANs": []any{"127.1.1.9"}}})
	assert.ErrorContains(t, Reusable(creds.Data, moved), "127.1.1.9")
	again, err := IssueCredentials(moved, creds.Data)
	require.NoError(t, err)
	assert.Equal(t, creds.Data[KeyEncryptionConfig], again.Data[KeyEncryptionConfig], "the encryption key is kept: a new one would make stored Secrets unreadable")
	assert.NotEmpty(t, creds.Data[KeyServiceAccountKey], "a first init makes the service-account key")
	assert.Equal(t, creds.Data[KeyServiceAccountKey], again.Data[KeyServiceAccountKey], "the service-account key is kept: tokens handed out stay valid")
	assert.Error(t, SignedBy(creds.AdminCert, again.Data[KeyCA]))
}

func TestInternalHostLayout(t *testing.T) {
	l := NewLayout("fed", "fs", map[string]any{"internalHost": "127.0.0.1", "apiserver": map[string]any{"securePort": float64(18443)}})
	assert.Equal(t, "https://127.0.0.1:18443", l.InternalAPIServerURL())
	assert.Contains(t, l.EtcdHosts(), "127.0.0.1")
	creds, err := IssueCredentials(l, nil)
	require.NoError(t, err)
	assert.ErrorContains(t, Reusable(creds.Data, NewLayout("fed", "fs", nil)), "controller manager's kubeconfig points at https://127.0.0.1:18443")
	delete(creds.Data, KeyEtcdClientKey)
	assert.ErrorContains(t, Reusable(creds.Data, l), KeyEtcdClientKey)
}
