package coredns

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
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
//	etcd-cert-file = /path/etcd-client.crt
//	etcd-key-file = /path/etcd-client.key
//	etcd-ca-file = /path/etcd-ca.crt
//
// Lists are comma separated, as in v1. The etcd-*-file keys are v1's too:
// the client certificate and key the records are written with, and the CA
// the etcd's serving certificate is checked against (else the system's).
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
		// EtcdCertFile and EtcdKeyFile are the etcd client certificate and key.
		EtcdCertFile string `gcfg:"etcd-cert-file"`
		EtcdKeyFile  string `gcfg:"etcd-key-file"`
		// EtcdCAFile verifies the etcd's serving certificate.
		EtcdCAFile string `gcfg:"etcd-ca-file"`
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
	if (c.Global.EtcdCertFile == "") != (c.Global.EtcdKeyFile == "") {
		return nil, fmt.Errorf("coredns-provider.conf: [Global] etcd-cert-file and etcd-key-file go together")
	}
	return &c, nil
}

// TLS is the etcd client's TLS configuration: nil when the config names no
// certificate or CA (plain http, or https checked against the system's CAs).
func (c *Config) TLS() (*tls.Config, error) {
	g := c.Global
	if g.EtcdCertFile == "" && g.EtcdKeyFile == "" && g.EtcdCAFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if g.EtcdCertFile != "" {
		cert, err := tls.LoadX509KeyPair(g.EtcdCertFile, g.EtcdKeyFile)
		if err != nil {
			return nil, fmt.Errorf("coredns-provider.conf: etcd-cert-file/etcd-key-file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if g.EtcdCAFile != "" {
		pem, err := os.ReadFile(g.EtcdCAFile)
		if err != nil {
			return nil, fmt.Errorf("coredns-provider.conf: etcd-ca-file: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("coredns-provider.conf: etcd-ca-file %s holds no PEM certificate", g.EtcdCAFile)
		}
	}
	return cfg, nil
}

// EtcdClient connects to the etcd endpoints of the config with its TLS
// settings; the caller closes it.
func (c *Config) EtcdClient() (*clientv3.Client, error) {
	tlsConfig, err := c.TLS()
	if err != nil {
		return nil, err
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   c.EtcdEndpoints(),
		DialTimeout: 5 * time.Second,
		TLS:         tlsConfig,
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd %v: %w", c.EtcdEndpoints(), err)
	}
	return client, nil
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
