package processplane

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/dnsprovider/coredns"
	"github.com/federation-v1/federation/pkg/embeddedetcd"
)

// TestDNSPlaneSecuresEmbeddedEtcd: with DNS on the embedded etcd, init
// issues the etcd's credentials from a CA of its own, the apiserver serves
// the etcd's client port over TLS with client certificates, and
// federation-dns and the controller manager are configured with theirs.
func TestDNSPlaneSecuresEmbeddedEtcd(t *testing.T) {
	p, err := New(Options{Name: "fed", Dir: filepath.Join(t.TempDir(), "fed"), DNSZone: "example.com."})
	require.NoError(t, err)
	require.NoError(t, p.Create())
	require.True(t, p.DNS.EtcdTLS)
	endpoint := fmt.Sprintf("https://127.0.0.1:%d", p.DNS.EmbeddedEtcdPort)
	assert.Equal(t, []string{endpoint}, p.DNS.EtcdEndpoints)

	args := apiserverArgs(p)
	for _, arg := range []string{
		fmt.Sprintf("--embedded-etcd-client-port=%d", p.DNS.EmbeddedEtcdPort),
		"--embedded-etcd-tls-cert-file=" + p.path(etcdServingCert),
		"--embedded-etcd-tls-private-key-file=" + p.path(etcdServingKey),
		"--embedded-etcd-client-ca-file=" + p.path(etcdCACert),
	} {
		assert.Contains(t, args, arg)
	}
	corefileText, err := os.ReadFile(p.path(corefile))
	require.NoError(t, err)
	assert.Contains(t, string(corefileText), "endpoint "+endpoint+"\n")
	assert.Contains(t, string(corefileText), fmt.Sprintf("tls %q %q %q\n", p.path(etcdDNSCert), p.path(etcdDNSKey), p.path(etcdCACert)))

	// Only the etcd CA's certificates are etcd clients: the plane's CA also
	// signs the apiserver's users.
	etcdCA, planeCA := certPool(t, p.path(etcdCACert)), certPool(t, p.path(caCert))
	for _, c := range []string{etcdDNSCert, etcdControllerCert} {
		leaf := certificate(t, p.path(c))
		opts := x509.VerifyOptions{Roots: etcdCA, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
		_, err := leaf.Verify(opts)
		assert.NoError(t, err, c)
		opts.Roots = planeCA
		_, err = leaf.Verify(opts)
		assert.Error(t, err, "%s is no apiserver user", c)
	}
	_, err = certificate(t, p.path(adminCert)).Verify(x509.VerifyOptions{Roots: etcdCA, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	assert.Error(t, err, "the apiserver's users are no etcd clients")

	// The controller manager's provider config reaches an etcd served as
	// the apiserver's flags say.
	etcd, err := embeddedetcd.StartWithOptions(p.path("data"), embeddedetcd.Options{
		ClientPort: p.DNS.EmbeddedEtcdPort,
		ClientTLS:  &embeddedetcd.ClientTLS{CertFile: p.path(etcdServingCert), KeyFile: p.path(etcdServingKey), CAFile: p.path(etcdCACert)},
	})
	require.NoError(t, err)
	defer etcd.Stop()
	f, err := os.Open(p.path(ProviderConfig))
	require.NoError(t, err)
	cfg, err := coredns.ParseConfig(f)
	f.Close()
	require.NoError(t, err)
	assert.Equal(t, []string{endpoint}, cfg.EtcdEndpoints())
	assert.Equal(t, p.path(etcdControllerCert), cfg.Global.EtcdCertFile)
	client, err := cfg.EtcdClient()
	require.NoError(t, err)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = client.Put(ctx, "/skydns/com/example/x", `{"host":"1.2.3.4"}`)
	assert.NoError(t, err)
}

// TestOlderDNSPlaneSwitchesToEtcdTLS: a plane made when the embedded etcd's
// port was plain HTTP gets TLS at its next start, while none of its programs
// runs.
func TestOlderDNSPlaneSwitchesToEtcdTLS(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "pki"), 0o700))
	state := `{"name": "old", "dir": "` + dir + `", "port": 6443, "server": "https://127.0.0.1:6443",
		"dnsZone": "example.com.", "controllerManagerAddress": "127.0.0.1:10253", "processes": {},
		"dns": {"address": "127.0.0.1:10053", "etcdEndpoints": ["http://127.0.0.1:10379"], "embeddedEtcdPort": 10379,
			"healthAddress": "127.0.0.1:10080", "readyAddress": "127.0.0.1:10081", "metricsAddress": "127.0.0.1:10082"}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, stateFile), []byte(state), 0o600))
	p, err := Load(dir)
	require.NoError(t, err)
	assert.NotContains(t, apiserverArgs(p), "--embedded-etcd-client-ca-file="+p.path(etcdCACert))

	require.NoError(t, p.ensureEtcdClientTLS())
	loaded, err := Load(dir)
	require.NoError(t, err)
	assert.True(t, loaded.DNS.EtcdTLS)
	assert.Equal(t, []string{"https://127.0.0.1:10379"}, loaded.DNS.EtcdEndpoints)
	assert.Contains(t, apiserverArgs(loaded), "--embedded-etcd-client-ca-file="+p.path(etcdCACert))
	for _, file := range []string{etcdServingCert, etcdDNSCert, etcdControllerCert, corefile, ProviderConfig} {
		assert.FileExists(t, p.path(file))
	}
	providerConfig, err := os.ReadFile(p.path(ProviderConfig))
	require.NoError(t, err)
	assert.Contains(t, string(providerConfig), "etcd-cert-file = "+p.path(etcdControllerCert))
}

// TestExternalEtcdDNSKeepsItsSettings: with --etcd-servers the etcd and its
// TLS are the operator's; init adds none.
func TestExternalEtcdDNSKeepsItsSettings(t *testing.T) {
	p, err := New(Options{Name: "fed", Dir: filepath.Join(t.TempDir(), "fed"), DNSZone: "example.com.", EtcdServers: []string{"http://10.0.0.1:2379"}})
	require.NoError(t, err)
	require.NoError(t, p.Create())
	assert.False(t, p.DNS.EtcdTLS)
	assert.NoFileExists(t, p.path(etcdCACert))
	for _, file := range []string{corefile, ProviderConfig} {
		data, err := os.ReadFile(p.path(file))
		require.NoError(t, err)
		assert.Contains(t, string(data), "http://10.0.0.1:2379")
		assert.NotContains(t, string(data), "tls")
		assert.NotContains(t, string(data), "etcd-cert-file")
	}
	for _, arg := range apiserverArgs(p) {
		assert.NotContains(t, arg, "--embedded-etcd")
	}
}

func certificate(t *testing.T, path string) *x509.Certificate {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	block, _ := pem.Decode(data)
	require.NotNil(t, block, path)
	c, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return c
}

func certPool(t *testing.T, path string) *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(certificate(t, path))
	return pool
}
