package dnsrecords

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
)

// addresses returns the load-balancer addresses of a cluster's Service: its
// ingress IPs and the addresses its ingress host names resolve to. Values
// that are not IP addresses are skipped, and so are host names that do not
// exist (the load balancer is gone); other resolver errors are returned, so
// that a passing resolver failure does not take the addresses out of DNS.
func addresses(ctx context.Context, resolve ResolveFunc, c Cluster) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, s := range c.IngressIPs {
		if ip, err := netip.ParseAddr(s); err == nil {
			out = append(out, ip.Unmap())
		}
	}
	for _, h := range c.IngressHostnames {
		resolved, err := resolve(ctx, h)
		if err != nil {
			var dnsErr *net.DNSError
			if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
				continue
			}
			return nil, fmt.Errorf("resolving ingress host name %s of cluster %s: %w", h, c.Name, err)
		}
		for _, s := range resolved {
			if ip, err := netip.ParseAddr(s); err == nil {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out, nil
}

// addrSet is a set of addresses.
type addrSet map[netip.Addr]struct{}

func (s addrSet) add(ips []netip.Addr) {
	for _, ip := range ips {
		s[ip] = struct{}{}
	}
}

func (s addrSet) merge(o addrSet) {
	for ip := range o {
		s[ip] = struct{}{}
	}
}

// split returns the IPv4 and IPv6 addresses, each sorted, as strings.
func (s addrSet) split() (v4, v6 []string) {
	ips := make([]netip.Addr, 0, len(s))
	for ip := range s {
		ips = append(ips, ip)
	}
	slices.SortFunc(ips, netip.Addr.Compare)
	for _, ip := range ips {
		if ip.Is4() {
			v4 = append(v4, ip.String())
		} else {
			v6 = append(v6, ip.String())
		}
	}
	return v4, v6
}
