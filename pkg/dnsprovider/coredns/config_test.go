package coredns

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/embeddedetcd"
	"github.com/federation-v1/federation/pkg/pki"
)

func TestParseConfig(t *testing.T) {
	t.Run("the v1 file", func(t *testing.T) {
		cfg, err := ParseConfig(strings.NewReader(`
[Global]
etcd-endpoints = http://127.0.0.1:2379
zones = example.com.
coredns-endpoints = 127.0.0.1:53
`))
		require.NoError(t, err)
		assert.Equal(t, []string{"http://127.0.0.1:2379"}, cfg.EtcdEndpoints())
		assert.Equal(t, []string{"example.com."}, cfg.Zones())
		assert.Equal(t, []string{"127.0.0.1:53"}, cfg.CoreDNSEndpoints())
		assert.Equal(t, "/skydns", cfg.PathPrefix())
	})
	t.Run("comma-separated lists and a path prefix", func(t *testing.T) {
		cfg, err := ParseConfig(strings.NewReader(`
[Global]
etcd-endpoints = http://10.0.0.1:2379, http://10.0.0.2:2379
zones = example.com.,example.org.
etcd-path-prefix = /federation-dns
`))
		require.NoError(t, err)
		assert.Equal(t, []string{"http://10.0.0.1:2379", "http://10.0.0.2:2379"}, cfg.EtcdEndpoints())
		assert.Equal(t, []string{"example.com.", "example.org."}, cfg.Zones())
		assert.Empty(t, cfg.CoreDNSEndpoints())
		assert.Equal(t, "/federation-dns", cfg.PathPrefix())
	})
	for name, tc := range map[string]struct{ file, want string }{
		"no etcd endpoint":              {"[Global]\nzones = example.com.\n", "etcd-endpoints is empty"},
		"no zone":                       {"[Global]\netcd-endpoints = http://127.0.0.1:2379\n", "zones is empty"},
		"unknown key":                   {"[Global]\netcd-endpoint = http://127.0.0.1:2379\n", "etcd-endpoint"},
		"not gcfg":                      {"etcd-endpoints: x\n", "coredns-provider.conf"},
		"a certificate without its key": {"[Global]\netcd-endpoints = https://127.0.0.1:2379\nzones = example.com.\netcd-cert-file = c.crt\n", "etcd-cert-file and etcd-key-file go together"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseConfig(strings.NewReader(tc.file))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestConfigTLS(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	ca, err := pki.NewCA("etcd-ca")
	require.NoError(t, err)
	require.NoError(t, ca.WriteFiles(path("ca.crt"), path("ca.key")))
	require.NoError(t, ca.IssueClient(path("client.crt"), path("client.key"), "federation-controller-manager"))
	parse := func(keys string) *Config {
		cfg, err := ParseConfig(strings.NewReader("[Global]\netcd-endpoints = https://127.0.0.1:2379\nzones = example.com.\n" + keys))
		require.NoError(t, err)
		return cfg
	}

	t.Run("v1's keys", func(t *testing.T) {
		cfg := parse(fmt.Sprintf("etcd-cert-file = %s\netcd-key-file = %s\netcd-ca-file = %s\n", path("client.crt"), path("client.key"), path("ca.crt")))
		tlsConfig, err := cfg.TLS()
		require.NoError(t, err)
		require.NotNil(t, tlsConfig)
		assert.Len(t, tlsConfig.Certificates, 1)
		require.NotNil(t, tlsConfig.RootCAs)
		assert.True(t, tlsConfig.RootCAs.Equal(poolOf(t, ca.CertPEM())))
	})
	t.Run("a CA alone", func(t *testing.T) {
		tlsConfig, err := parse("etcd-ca-file = " + path("ca.crt") + "\n").TLS()
		require.NoError(t, err)
		assert.Empty(t, tlsConfig.Certificates)
		assert.NotNil(t, tlsConfig.RootCAs)
	})
	t.Run("none: no TLS configuration", func(t *testing.T) {
		tlsConfig, err := parse("").TLS()
		require.NoError(t, err)
		assert.Nil(t, tlsConfig)
	})
	for name, tc := range map[string]struct{ keys, want string }{
		"missing certificate": {"etcd-cert-file = " + path("none.crt") + "\netcd-key-file = " + path("client.key") + "\n", "etcd-cert-file/etcd-key-file"},
		"missing CA":          {"etcd-ca-file = " + path("none.crt") + "\n", "etcd-ca-file"},
		"a CA file not PEM":   {"etcd-ca-file = " + path("client.key") + "\n", "no PEM certificate"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parse(tc.keys).TLS()
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestProviderOverClientTLS writes a record through an etcd that requires
// client certificates, with the provider's configuration.
func TestProviderOverClientTLS(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	ca, err := pki.NewCA("etcd-ca")
	require.NoError(t, err)
	require.NoError(t, ca.WriteFiles(path("ca.crt"), path("ca.key")))
	require.NoError(t, ca.IssueServing(path("etcd.crt"), path("etcd.key"), "etcd"))
	require.NoError(t, ca.IssueClient(path("client.crt"), path("client.key"), "federation-controller-manager"))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	etcd, err := embeddedetcd.StartWithOptions(path("data"), embeddedetcd.Options{
		ClientPort: port,
		ClientTLS:  &embeddedetcd.ClientTLS{CertFile: path("etcd.crt"), KeyFile: path("etcd.key"), CAFile: path("ca.crt")},
	})
	require.NoError(t, err)
	t.Cleanup(etcd.Stop)

	cfg, err := ParseConfig(strings.NewReader(fmt.Sprintf("[Global]\netcd-endpoints = %s\nzones = example.com.\netcd-cert-file = %s\netcd-key-file = %s\netcd-ca-file = %s\n",
		etcd.PortURL(), path("client.crt"), path("client.key"), path("ca.crt"))))
	require.NoError(t, err)
	p, err := NewFromConfig(cfg)
	require.NoError(t, err)
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	z, err := p.Zone(ctx, "example.com.")
	require.NoError(t, err)
	require.NoError(t, z.StartChangeset().Upsert(a(global, 180, "1.2.3.4")).Apply(ctx))
	sets, err := z.Get(ctx, global)
	require.NoError(t, err)
	require.Len(t, sets, 1)
	assert.Equal(t, []string{"1.2.3.4"}, sets[0].Rrdatas)
}

func poolOf(t *testing.T, pem []byte) *x509.CertPool {
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(pem))
	return pool
}
