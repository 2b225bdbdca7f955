package coredns

import (
	"fmt"
	"io"
	"strings"

	"gopkg.in/gcfg.v1"
)

// DefaultPathPrefix is the etcd key prefix of the records, the etcd plugin's
// default.
const DefaultPathPrefix = "/skydns"

// Config is Federation v1's coredns-provider.conf, in gcfg format:
//
//	[Global]
//	etcd-endpoints = http://127.0.0.1:2379
//	zones = example.com.
//	coredns-endpoints = 127.0.0.1:53
//
// Lists are comma separated, as in v1.
type Config struct {
	// Global is the only section.
	Global struct {
		// EtcdEndpoints are the etcd client URLs the records are written to.
		EtcdEndpoints string `gcfg:"etcd-endpoints"`
		// Zones are the DNS zones the CoreDNS servers are authoritative for.
		Zones string `gcfg:"zones"`
		// CoreDNSEndpoints are the address:port of the CoreDNS servers
		// serving the zones (for clients such as kube-dns stub domains).
		CoreDNSEndpoints string `gcfg:"coredns-endpoints"`
		// EtcdPathPrefix is the etcd key prefix (ours, not in v1; default /skydns).
		EtcdPathPrefix string `gcfg:"etcd-path-prefix"`
	}
}

// ParseConfig reads a coredns-provider.conf and checks that it names at
// least one etcd endpoint and one zone.
func ParseConfig(r io.Reader) (*Config, error) {
	var c Config
	if err := gcfg.ReadInto(&c, r); err != nil {
		return nil, fmt.Errorf("reading coredns-provider.conf: %w", err)
	}
	if len(c.EtcdEndpoints()) == 0 {
		return nil, fmt.Errorf("coredns-provider.conf: [Global] etcd-endpoints is empty")
	}
	if len(c.Zones()) == 0 {
		return nil, fmt.Errorf("coredns-provider.conf: [Global] zones is empty")
	}
	return &c, nil
}

// EtcdEndpoints returns the etcd endpoints of the config.
func (c *Config) EtcdEndpoints() []string { return splitList(c.Global.EtcdEndpoints) }

// Zones returns the zones of the config.
func (c *Config) Zones() []string { return splitList(c.Global.Zones) }

// CoreDNSEndpoints returns the CoreDNS server addresses of the config.
func (c *Config) CoreDNSEndpoints() []string { return splitList(c.Global.CoreDNSEndpoints) }

// PathPrefix returns the etcd key prefix, DefaultPathPrefix when unset.
func (c *Config) PathPrefix() string {
	if c.Global.EtcdPathPrefix == "" {
		return DefaultPathPrefix
	}
	return c.Global.EtcdPathPrefix
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
