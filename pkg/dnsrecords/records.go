package dnsrecords

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/federation-v1/federation/pkg/dnsprovider"
)

// Service identifies a federated Service.
type Service struct {
	// Namespace of the Service.
	Namespace string
	// Name of the Service.
	Name string
}

// Cluster is what the DNS records need to know of one member cluster and the
// Service's copy in it.
type Cluster struct {
	// Name of the member cluster, for errors.
	Name string
	// Ready is the cluster's Ready condition.
	Ready bool
	// Zones are the cluster's failure zones; a cluster may span several.
	Zones []string
	// Region is the cluster's region.
	Region string
	// IngressIPs are the load-balancer ingress IP addresses of the Service.
	IngressIPs []string
	// IngressHostnames are the load-balancer ingress host names of the
	// Service, resolved to addresses with Config.Resolve.
	IngressHostnames []string
	// HasReadyEndpoints is whether the Service has at least one ready endpoint.
	HasReadyEndpoints bool
}

// healthy reports whether the cluster's addresses count: v1 counts a
// cluster that is Ready and whose Service has ready endpoints.
func (c Cluster) healthy() bool { return c.Ready && c.HasReadyEndpoints }

// ResolveFunc turns a host name into IP addresses, as net.Resolver.LookupHost.
type ResolveFunc func(ctx context.Context, host string) ([]string, error)

// Config is the federation-wide part of the records.
type Config struct {
	// Federation is the federation's name, e.g. "fed".
	Federation string
	// Domain is the DNS zone the names live in, e.g. "example.com.".
	Domain string
	// TTL of the records in seconds; 0 means dnsprovider.DefaultTTL (180).
	TTL int64
	// Resolve resolves hostname ingress; nil means net.DefaultResolver.
	Resolve ResolveFunc
}

func (c Config) complete() (Config, error) {
	if c.Federation == "" || strings.Contains(c.Federation, ".") {
		return c, fmt.Errorf("service DNS: federation name %q is not a single DNS label", c.Federation)
	}
	if c.Domain = dnsprovider.CanonicalName(c.Domain); c.Domain == "." || strings.Contains(c.Domain, "..") || strings.HasPrefix(c.Domain, ".") {
		return c, fmt.Errorf("service DNS: domain %q is not a DNS zone name", c.Domain)
	}
	if c.TTL < 0 {
		return c, fmt.Errorf("service DNS: TTL %d is negative", c.TTL)
	}
	if c.TTL == 0 {
		c.TTL = dnsprovider.DefaultTTL
	}
	if c.Resolve == nil {
		c.Resolve = net.DefaultResolver.LookupHost
	}
	return c, nil
}
