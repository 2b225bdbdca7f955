// Package coredns is the dnsprovider for CoreDNS's etcd plugin: it writes
// record sets into etcd v3 in the SkyDNS layout the plugin serves, as
// Federation v1's CoreDNS provider did.
//
// Each rrdata of a name is one key, the name's labels reversed under the
// path prefix and the FNV-32a hash of the rrdata:
//
//	/skydns/com/example/svc/fed/default/nginx/8d4d2c1b = {"host":"1.2.3.4","ttl":180}
//
// A CNAME is a key whose host is a name. The record format and the key
// layout are those of CoreDNS's plugin/etcd/msg package. Changes touch only
// the keys that differ, one etcd transaction per name.
package coredns

import (
	"context"
	"fmt"
	"slices"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/federation-v1/federation/pkg/dnsprovider"
)

// Provider serves the configured zones from etcd.
type Provider struct {
	client *clientv3.Client
	prefix string
	zones  []string
	// ownClient is set when the provider created the client and Close must close it.
	ownClient bool
}

var _ dnsprovider.Interface = (*Provider)(nil)

// New returns a provider writing with client under prefix (e.g. "/skydns")
// for the given zones. The caller keeps ownership of client.
func New(client *clientv3.Client, prefix string, zones []string) (*Provider, error) {
	if client == nil {
		return nil, fmt.Errorf("coredns dns provider: no etcd client")
	}
	if len(zones) == 0 {
		return nil, fmt.Errorf("coredns dns provider: no zones")
	}
	p := &Provider{client: client, prefix: prefix}
	if p.prefix == "" {
		p.prefix = DefaultPathPrefix
	}
	for _, z := range zones {
		p.zones = append(p.zones, dnsprovider.CanonicalName(z))
	}
	return p, nil
}

// NewFromConfig connects to the etcd endpoints of cfg and returns a provider
// for its zones. Close releases the connection.
func NewFromConfig(cfg *Config) (*Provider, error) {
	client, err := cfg.EtcdClient()
	if err != nil {
		return nil, fmt.Errorf("coredns dns provider: %w", err)
	}
	p, err := New(client, cfg.PathPrefix(), cfg.Zones())
	if err != nil {
		client.Close()
		return nil, err
	}
	p.ownClient = true
	return p, nil
}

// Close closes the etcd client if the provider created it.
func (p *Provider) Close() error {
	if p.ownClient {
		return p.client.Close()
	}
	return nil
}

// Zones returns the configured zones.
func (p *Provider) Zones(context.Context) ([]dnsprovider.Zone, error) {
	out := make([]dnsprovider.Zone, 0, len(p.zones))
	for _, z := range p.zones {
		out = append(out, &zone{name: z, client: p.client, prefix: p.prefix})
	}
	return out, nil
}

// Zone returns the configured zone of that name.
func (p *Provider) Zone(_ context.Context, name string) (dnsprovider.Zone, error) {
	name = dnsprovider.CanonicalName(name)
	if !slices.Contains(p.zones, name) {
		return nil, fmt.Errorf("coredns dns provider: zone %s (serving %v): %w", name, p.zones, dnsprovider.ErrZoneNotFound)
	}
	return &zone{name: name, client: p.client, prefix: p.prefix}, nil
}
