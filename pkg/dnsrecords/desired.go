package dnsrecords

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/federation-v1/federation/pkg/dnsprovider"
)

// Desired returns the record sets the Service should have, sorted by name
// and type: for every zone and region of the clusters (healthy or not) and
// the global name, the A/AAAA records of the healthy clusters' addresses or
// the CNAME fallback. A cluster counts when it is Ready, its Service has
// ready endpoints and at least one ingress address. A cluster without a
// region contributes to the global name only. Zones and regions that are
// not DNS-1123 labels are skipped; names over the DNS length limits are
// errors.
func Desired(ctx context.Context, cfg Config, svc Service, clusters []Cluster) ([]dnsprovider.RecordSet, error) {
	cfg, err := cfg.complete()
	if err != nil {
		return nil, err
	}
	n := newNames(cfg.Federation, cfg.Domain, svc)
	globalName, err := n.global()
	if err != nil {
		return nil, err
	}
	type zoneKey struct{ zone, region string }
	global := addrSet{}
	regions := map[string]addrSet{}
	zones := map[zoneKey]addrSet{}
	for _, c := range clusters {
		c = withLabelsOnly(ctx, svc, c)
		ips := addrSet{}
		if c.healthy() {
			addrs, err := addresses(ctx, cfg.Resolve, c)
			if err != nil {
				return nil, fmt.Errorf("DNS records of service %s/%s: %w", svc.Namespace, svc.Name, err)
			}
			ips.add(addrs)
		}
		global.merge(ips)
		if c.Region == "" {
			continue
		}
		region := strings.ToLower(c.Region)
		if regions[region] == nil {
			regions[region] = addrSet{}
		}
		regions[region].merge(ips)
		for _, z := range c.Zones {
			k := zoneKey{strings.ToLower(z), region}
			if zones[k] == nil {
				zones[k] = addrSet{}
			}
			zones[k].merge(ips)
		}
	}

	var out []dnsprovider.RecordSet
	out = append(out, cfg.addressSets(globalName, global)...)
	for region, ips := range regions {
		name, err := n.region(region)
		if err != nil {
			return nil, err
		}
		out = append(out, cfg.setsOrCNAME(name, ips, globalName)...)
	}
	for k, ips := range zones {
		name, err := n.zone(k.zone, k.region)
		if err != nil {
			return nil, err
		}
		regionName, err := n.region(k.region)
		if err != nil {
			return nil, err
		}
		out = append(out, cfg.setsOrCNAME(name, ips, regionName)...)
	}
	slices.SortFunc(out, dnsprovider.Compare)
	return out, nil
}

// setsOrCNAME returns the address record sets of name, or a CNAME to
// fallback when there is no address.
func (cfg Config) setsOrCNAME(name string, ips addrSet, fallback string) []dnsprovider.RecordSet {
	if len(ips) > 0 {
		return cfg.addressSets(name, ips)
	}
	return []dnsprovider.RecordSet{{Name: name, Type: dnsprovider.CNAME, TTL: cfg.TTL, Rrdatas: []string{fallback}}}
}

// addressSets returns the A and AAAA record sets of name, none when empty.
func (cfg Config) addressSets(name string, ips addrSet) []dnsprovider.RecordSet {
	var out []dnsprovider.RecordSet
	v4, v6 := ips.split()
	if len(v4) > 0 {
		out = append(out, dnsprovider.RecordSet{Name: name, Type: dnsprovider.A, TTL: cfg.TTL, Rrdatas: v4})
	}
	if len(v6) > 0 {
		out = append(out, dnsprovider.RecordSet{Name: name, Type: dnsprovider.AAAA, TTL: cfg.TTL, Rrdatas: v6})
	}
	return out
}
