package dnsrecords

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/dnsprovider"
)

const (
	global   = "nginx.default.fed.svc.example.com."
	east     = "nginx.default.fed.svc.us-east1.example.com."
	eastB    = "nginx.default.fed.svc.us-east1-b.us-east1.example.com."
	eastC    = "nginx.default.fed.svc.us-east1-c.us-east1.example.com."
	west     = "nginx.default.fed.svc.eu-west1.example.com."
	westA    = "nginx.default.fed.svc.eu-west1-a.eu-west1.example.com."
	testTTL  = 180
	nginxSvc = "default/nginx"
)

var nginx = Service{Namespace: "default", Name: "nginx"}

func a(name string, ips ...string) dnsprovider.RecordSet {
	return dnsprovider.RecordSet{Name: name, Type: dnsprovider.A, TTL: testTTL, Rrdatas: ips}
}

func aaaa(name string, ips ...string) dnsprovider.RecordSet {
	return dnsprovider.RecordSet{Name: name, Type: dnsprovider.AAAA, TTL: testTTL, Rrdatas: ips}
}

func cname(name, target string) dnsprovider.RecordSet {
	return dnsprovider.RecordSet{Name: name, Type: dnsprovider.CNAME, TTL: testTTL, Rrdatas: []string{target}}
}

// healthy is a Ready cluster in one zone whose Service has ready endpoints
// and the given ingress IPs.
func healthy(name, region, zone string, ips ...string) Cluster {
	return Cluster{Name: name, Ready: true, Region: region, Zones: []string{zone}, IngressIPs: ips, HasReadyEndpoints: true}
}

// resolver is a fake ResolveFunc: unknown names do not exist, "broken." fails.
func resolver(hosts map[string][]string) ResolveFunc {
	return func(_ context.Context, host string) ([]string, error) {
		if host == "broken.example.net" {
			return nil, &net.DNSError{Err: "server misbehaving", Name: host, IsTemporary: true}
		}
		if addrs, ok := hosts[host]; ok {
			return addrs, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
}

func TestDesired(t *testing.T) {
	notReady := healthy("c2", "us-east1", "us-east1-c", "10.0.0.2")
	notReady.Ready = false
	noEndpoints := healthy("c2", "us-east1", "us-east1-c", "10.0.0.2")
	noEndpoints.HasReadyEndpoints = false
	noIngress := healthy("c2", "us-east1", "us-east1-c")

	tests := []struct {
		name     string
		ttl      int64
		clusters []Cluster
		hosts    map[string][]string
		want     []dnsprovider.RecordSet
	}{{
		name:     "one healthy cluster fills its zone, region and the global name",
		clusters: []Cluster{healthy("c1", "us-east1", "us-east1-b", "10.0.0.1")},
		want:     []dnsprovider.RecordSet{a(global, "10.0.0.1"), a(eastB, "10.0.0.1"), a(east, "10.0.0.1")},
	}, {
		name:     "a zone without a healthy cluster is a CNAME to its region (cluster not Ready)",
		clusters: []Cluster{healthy("c1", "us-east1", "us-east1-b", "10.0.0.1"), notReady},
		want:     []dnsprovider.RecordSet{a(global, "10.0.0.1"), a(eastB, "10.0.0.1"), cname(eastC, east), a(east, "10.0.0.1")},
	}, {
		name:     "a cluster whose service has no ready endpoint does not count",
		clusters: []Cluster{healthy("c1", "us-east1", "us-east1-b", "10.0.0.1"), noEndpoints},
		want:     []dnsprovider.RecordSet{a(global, "10.0.0.1"), a(eastB, "10.0.0.1"), cname(eastC, east), a(east, "10.0.0.1")},
	}, {
		name:     "a cluster without load-balancer ingress does not count",
		clusters: []Cluster{healthy("c1", "us-east1", "us-east1-b", "10.0.0.1"), noIngress},
		want:     []dnsprovider.RecordSet{a(global, "10.0.0.1"), a(eastB, "10.0.0.1"), cname(eastC, east), a(east, "10.0.0.1")},
	}, {
		name:     "an empty region is a CNAME to the global name and its zones to the region",
		clusters: []Cluster{healthy("c1", "eu-west1", "eu-west1-a", "10.0.0.1"), notReady},
		want: []dnsprovider.RecordSet{
			a(global, "10.0.0.1"), a(westA, "10.0.0.1"), a(west, "10.0.0.1"),
			cname(eastC, east), cname(east, global),
		},
	}, {
		name:     "without any healthy cluster the global name has no record, the fallback CNAMEs stay",
		clusters: []Cluster{notReady, noEndpoints},
		want:     []dnsprovider.RecordSet{cname(eastC, east), cname(east, global)},
	}, {
		name:     "no clusters, no records",
		clusters: nil,
		want:     nil,
	}, {
		name: "every zone of a multi-zone cluster gets its record",
		clusters: []Cluster{{
			Name: "c1", Ready: true, HasReadyEndpoints: true, Region: "us-east1",
			Zones: []string{"us-east1-b", "us-east1-c"}, IngressIPs: []string{"10.0.0.1"},
		}},
		want: []dnsprovider.RecordSet{a(global, "10.0.0.1"), a(eastB, "10.0.0.1"), a(eastC, "10.0.0.1"), a(east, "10.0.0.1")},
	}, {
		name: "addresses of clusters are merged, deduplicated and sorted per name",
		clusters: []Cluster{
			healthy("c1", "us-east1", "us-east1-b", "10.0.0.10", "10.0.0.9"),
			healthy("c2", "us-east1", "us-east1-b", "10.0.0.9", "10.0.0.2"),
			healthy("c3", "us-east1", "us-east1-c", "10.0.0.3"),
			healthy("c4", "eu-west1", "eu-west1-a", "10.0.1.1"),
		},
		want: []dnsprovider.RecordSet{
			a(global, "10.0.0.2", "10.0.0.3", "10.0.0.9", "10.0.0.10", "10.0.1.1"),
			a(westA, "10.0.1.1"), a(west, "10.0.1.1"),
			a(eastB, "10.0.0.2", "10.0.0.9", "10.0.0.10"), a(eastC, "10.0.0.3"),
			a(east, "10.0.0.2", "10.0.0.3", "10.0.0.9", "10.0.0.10"),
		},
	}, {
		name: "hostname ingress is resolved; names that do not exist and non-addresses are skipped",
		clusters: []Cluster{{
			Name: "c1", Ready: true, HasReadyEndpoints: true, Region: "us-east1", Zones: []string{"us-east1-b"},
			IngressIPs:       []string{"not-an-ip"},
			IngressHostnames: []string{"lb.example.net", "gone.example.net"},
		}},
		hosts: map[string][]string{"lb.example.net": {"10.0.0.7", "10.0.0.8"}},
		want: []dnsprovider.RecordSet{
			a(global, "10.0.0.7", "10.0.0.8"), a(eastB, "10.0.0.7", "10.0.0.8"), a(east, "10.0.0.7", "10.0.0.8"),
		},
	}, {
		name:     "a cluster whose only hostname does not resolve counts as empty",
		clusters: []Cluster{{Name: "c1", Ready: true, HasReadyEndpoints: true, Region: "us-east1", Zones: []string{"us-east1-b"}, IngressHostnames: []string{"gone.example.net"}}},
		want:     []dnsprovider.RecordSet{cname(eastB, east), cname(east, global)},
	}, {
		name:     "IPv6 addresses are AAAA records",
		clusters: []Cluster{healthy("c1", "us-east1", "us-east1-b", "10.0.0.1", "2001:db8::1")},
		want: []dnsprovider.RecordSet{
			a(global, "10.0.0.1"), aaaa(global, "2001:db8::1"),
			a(eastB, "10.0.0.1"), aaaa(eastB, "2001:db8::1"),
			a(east, "10.0.0.1"), aaaa(east, "2001:db8::1"),
		},
	}, {
		name:     "a cluster without region counts for the global name only",
		clusters: []Cluster{{Name: "c1", Ready: true, HasReadyEndpoints: true, Zones: []string{"z"}, IngressIPs: []string{"10.0.0.1"}}},
		want:     []dnsprovider.RecordSet{a(global, "10.0.0.1")},
	}, {
		name:     "zone and region labels are lower-cased",
		clusters: []Cluster{healthy("c1", "US-East1", "US-East1-B", "10.0.0.1")},
		want:     []dnsprovider.RecordSet{a(global, "10.0.0.1"), a(eastB, "10.0.0.1"), a(east, "10.0.0.1")},
	}, {
		name:     "the TTL is configurable",
		ttl:      30,
		clusters: []Cluster{healthy("c1", "us-east1", "us-east1-b", "10.0.0.1"), notReady},
		want: []dnsprovider.RecordSet{
			withTTL(a(global, "10.0.0.1"), 30), withTTL(a(eastB, "10.0.0.1"), 30),
			withTTL(cname(eastC, east), 30), withTTL(a(east, "10.0.0.1"), 30),
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Federation: "fed", Domain: "example.com", TTL: tt.ttl, Resolve: resolver(tt.hosts)}
			got, err := Desired(context.Background(), cfg, nginx, tt.clusters)
			require.NoError(t, err)
			slices.SortFunc(tt.want, dnsprovider.Compare)
			assert.Equal(t, tt.want, got)
			for _, rs := range got {
				assert.NoError(t, rs.Validate())
			}
		})
	}
}

func withTTL(rs dnsprovider.RecordSet, ttl int64) dnsprovider.RecordSet {
	rs.TTL = ttl
	return rs
}

func TestDesiredErrors(t *testing.T) {
	long := strings.Repeat("x", 64)
	label55 := strings.Repeat("y", 55)
	// A domain that leaves room for the global name (249 characters) but not
	// for the zone and region names.
	longDomain := strings.Join([]string{label55, label55, label55, label55}, ".") + ".com"
	tests := []struct {
		name     string
		cfg      Config
		svc      Service
		clusters []Cluster
		want     []string
	}{{
		name: "a service name longer than a DNS label",
		svc:  Service{Namespace: "default", Name: long},
		want: []string{"default/" + long, "more than 63"},
	}, {
		name:     "a zone name longer than 253 characters",
		cfg:      Config{Federation: "fed", Domain: longDomain},
		svc:      nginx,
		clusters: []Cluster{healthy("c1", "us-east1", "us-east1-b", "10.0.0.1")},
		want:     []string{nginxSvc, "more than 253"},
	}, {
		name:     "a resolver failure other than not-found",
		svc:      nginx,
		clusters: []Cluster{{Name: "c1", Ready: true, HasReadyEndpoints: true, IngressHostnames: []string{"broken.example.net"}}},
		want:     []string{nginxSvc, "broken.example.net", "cluster c1", "server misbehaving"},
	}, {
		name: "a federation name that is not a label",
		cfg:  Config{Federation: "a.b", Domain: "example.com"},
		svc:  nginx,
		want: []string{`federation name "a.b"`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			if cfg.Federation == "" {
				cfg = Config{Federation: "fed", Domain: "example.com"}
			}
			cfg.Resolve = resolver(nil)
			got, err := Desired(context.Background(), cfg, tt.svc, tt.clusters)
			require.Error(t, err, "got %v", got)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestDesiredWrapsResolverError(t *testing.T) {
	cfg := Config{Federation: "fed", Domain: "example.com", Resolve: resolver(nil)}
	_, err := Desired(context.Background(), cfg, nginx, []Cluster{{Name: "c1", Ready: true, HasReadyEndpoints: true, IngressHostnames: []string{"broken.example.net"}}})
	var dnsErr *net.DNSError
	assert.True(t, errors.As(err, &dnsErr), "error %v does not wrap the resolver's", err)
}
