package coredns

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		"no etcd endpoint": {"[Global]\nzones = example.com.\n", "etcd-endpoints is empty"},
		"no zone":          {"[Global]\netcd-endpoints = http://127.0.0.1:2379\n", "zones is empty"},
		"unknown key":      {"[Global]\netcd-endpoint = http://127.0.0.1:2379\n", "etcd-endpoint"},
		"not gcfg":         {"etcd-endpoints: x\n", "coredns-provider.conf"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseConfig(strings.NewReader(tc.file))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
