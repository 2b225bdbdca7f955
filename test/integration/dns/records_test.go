// Package dns_test runs the DNS path of the federation end to end: service
// records computed by servicedns, written to a real etcd by the CoreDNS
// provider, served by the real federation-dns binary and queried over DNS.
package dns_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/dnsprovider"
	"github.com/federation-v1/federation/pkg/dnsprovider/coredns"
	"github.com/federation-v1/federation/pkg/dnsrecords"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/etcdtest"
)

const (
	ttl = 42

	global  = "nginx.default.fed.svc.example.com."
	east    = "nginx.default.fed.svc.us-east1.example.com."
	eastB   = "nginx.default.fed.svc.us-east1-b.us-east1.example.com."
	eastC   = "nginx.default.fed.svc.us-east1-c.us-east1.example.com."
	eastD   = "nginx.default.fed.svc.us-east1-d.us-east1.example.com."
	west    = "nginx.default.fed.svc.eu-west1.example.com."
	westA   = "nginx.default.fed.svc.eu-west1-a.eu-west1.example.com."
	central = "nginx.default.fed.svc.us-central1.example.com."

	// globalDir is the etcd directory of the global name.
	globalDir = "/skydns/com/example/svc/fed/default/nginx/"
	// waitTimeout bounds every wait for an answer to change.
	waitTimeout = 20 * time.Second
)

// answer is what a query returned: addresses, CNAME targets (in chain
// order), the TTLs of all records, and the response code.
type answer struct {
	rcode  int
	addrs  []string
	cnames []string
	ttls   []uint32
}

func query(addr, network, name string, qtype uint16) (answer, error) {
	r, err := exchange(addr, network, name, qtype)
	if err != nil {
		return answer{}, err
	}
	a := answer{rcode: r.Rcode}
	for _, rr := range r.Answer {
		a.ttls = append(a.ttls, rr.Header().Ttl)
		switch rr := rr.(type) {
		case *dns.A:
			a.addrs = append(a.addrs, rr.A.String())
		case *dns.AAAA:
			a.addrs = append(a.addrs, rr.AAAA.String())
		case *dns.CNAME:
			a.cnames = append(a.cnames, rr.Target)
		}
	}
	slices.Sort(a.addrs)
	return a, nil
}

// waitFor polls name until its answer has exactly the wanted addresses and
// CNAME chain, and returns that answer.
func waitFor(t *testing.T, s *server, name string, addrs []string, cnames ...string) answer {
	t.Helper()
	slices.Sort(addrs)
	var got answer
	err := poll.Until(context.Background(), waitTimeout, fmt.Sprintf("%s to answer %v via CNAMEs %v", name, addrs, cnames), func(context.Context) error {
		var err error
		if got, err = query(s.addr, "udp", name, dns.TypeA); err != nil {
			return err
		}
		if !slices.Equal(got.addrs, addrs) || !slices.Equal(got.cnames, cnames) {
			return fmt.Errorf("got rcode %s, addresses %v, CNAMEs %v", dns.RcodeToString[got.rcode], got.addrs, got.cnames)
		}
		return nil
	})
	require.NoError(t, err)
	return got
}

// fakeResolver resolves the load balancer host names of the test.
func fakeResolver(_ context.Context, host string) ([]string, error) {
	if host == "lb.us-central1.example.net" {
		return []string{"10.0.2.1"}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func TestServiceRecordsServedByFederationDNS(t *testing.T) {
	ctx := context.Background()
	etcd := etcdtest.Start(t)
	s := startServer(t, etcd.Endpoint)

	provider, err := coredns.New(etcd.Client, "/skydns", []string{"example.com."})
	require.NoError(t, err)
	zone, err := provider.Zone(ctx, "example.com.")
	require.NoError(t, err)
	cfg := dnsrecords.Config{Federation: "fed", Domain: "example.com.", TTL: ttl, Resolve: fakeResolver}
	nginx := dnsrecords.Service{Namespace: "default", Name: "nginx"}
	clusters := []dnsrecords.Cluster{
		{Name: "c1", Ready: true, HasReadyEndpoints: true, Region: "us-east1", Zones: []string{"us-east1-b"},
			IngressIPs: []string{"10.0.0.1", "10.0.0.2"}},
		{Name: "c2", Ready: true, HasReadyEndpoints: true, Region: "us-east1", Zones: []string{"us-east1-c", "us-east1-d"},
			IngressIPs: []string{"10.0.0.3"}},
		{Name: "c3", Ready: false, HasReadyEndpoints: true, Region: "eu-west1", Zones: []string{"eu-west1-a"},
			IngressIPs: []string{"10.0.1.1"}},
		{Name: "c4", Ready: true, HasReadyEndpoints: true, Region: "us-central1", Zones: []string{"us-central1-a"},
			IngressHostnames: []string{"lb.us-central1.example.net"}},
	}
	sync := func(svc dnsrecords.Service, clusters []dnsrecords.Cluster) {
		t.Helper()
		desired, err := dnsrecords.Desired(ctx, cfg, svc, clusters)
		require.NoError(t, err)
		_, err = dnsrecords.Apply(ctx, cfg, svc, zone, desired)
		require.NoError(t, err)
	}
	sync(nginx, clusters)
	// A second service whose records must outlive nginx's.
	other := dnsrecords.Service{Namespace: "default", Name: "nginx2"}
	sync(other, clusters[:1])

	all := []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.2.1"}
	t.Run("A records of the global, region and zone names", func(t *testing.T) {
		got := waitFor(t, s, global, all)
		assert.Equal(t, dns.RcodeSuccess, got.rcode)
		waitFor(t, s, east, []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"})
		waitFor(t, s, eastB, []string{"10.0.0.1", "10.0.0.2"})
		waitFor(t, s, central, []string{"10.0.2.1"})
	})

	t.Run("every zone of a multi-zone cluster answers", func(t *testing.T) {
		waitFor(t, s, eastC, []string{"10.0.0.3"})
		waitFor(t, s, eastD, []string{"10.0.0.3"})
	})

	t.Run("TTL as configured", func(t *testing.T) {
		got := waitFor(t, s, eastB, []string{"10.0.0.1", "10.0.0.2"})
		for _, ttl := range got.ttls {
			assert.EqualValues(t, 42, ttl)
		}
	})

	t.Run("an empty zone and region fall back by CNAME to the region, then global", func(t *testing.T) {
		got := waitFor(t, s, westA, all, west, global)
		for _, ttl := range got.ttls {
			assert.EqualValues(t, 42, ttl)
		}
		waitFor(t, s, west, all, global)
		// CoreDNS's etcd plugin answers qtype CNAME only from a key at the
		// exact name, not from the /<hash> keys of the v1 layout: only A
		// (and AAAA) queries show the CNAMEs.
		cname, err := query(s.addr, "udp", westA, dns.TypeCNAME)
		require.NoError(t, err)
		t.Logf("CNAME query of %s: rcode %s, CNAMEs %v", westA, dns.RcodeToString[cname.rcode], cname.cnames)
	})

	t.Run("TCP answers as UDP", func(t *testing.T) {
		got, err := query(s.addr, "tcp", global, dns.TypeA)
		require.NoError(t, err)
		assert.Equal(t, all, got.addrs)
	})

	t.Run("a multi-address record is updated in place", func(t *testing.T) {
		before := etcd.Keys(t, globalDir)
		require.Len(t, before, 4)
		clusters[0].IngressIPs = []string{"10.0.0.2", "10.0.0.4"}
		sync(nginx, clusters)
		after := etcd.Keys(t, globalDir)
		require.Len(t, after, 4)
		var kept, added []string
		for k, rev := range after {
			if old, ok := before[k]; ok {
				assert.Equal(t, old, rev, "key %s of an unchanged address was rewritten", k)
				kept = append(kept, k)
			} else {
				added = append(added, k)
			}
		}
		assert.Len(t, kept, 3, "the keys of 10.0.0.2, 10.0.0.3 and 10.0.2.1 stay")
		assert.Len(t, added, 1, "one key for 10.0.0.4")
		waitFor(t, s, global, []string{"10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.2.1"})
		waitFor(t, s, eastB, []string{"10.0.0.2", "10.0.0.4"})
	})

	t.Run("a sync without change writes nothing", func(t *testing.T) {
		rev := etcd.Revision(t)
		sync(nginx, clusters)
		assert.Equal(t, rev, etcd.Revision(t))
	})

	t.Run("a cluster losing its endpoints turns its zones into CNAMEs", func(t *testing.T) {
		clusters[1].HasReadyEndpoints = false
		sync(nginx, clusters)
		waitFor(t, s, eastC, []string{"10.0.0.2", "10.0.0.4"}, east)
		waitFor(t, s, east, []string{"10.0.0.2", "10.0.0.4"})
		waitFor(t, s, global, []string{"10.0.0.2", "10.0.0.4", "10.0.2.1"})
	})

	t.Run("deleting the service removes every answer and key of it", func(t *testing.T) {
		_, err := dnsrecords.Apply(ctx, cfg, nginx, zone, nil)
		require.NoError(t, err)
		for _, name := range []string{global, east, eastB, eastC, eastD, west, westA, central} {
			got := waitFor(t, s, name, nil)
			assert.Equal(t, dns.RcodeNameError, got.rcode, "%s after deletion", name)
		}
		for k := range etcd.Keys(t, "/skydns/") {
			assert.Contains(t, k, "/nginx2/", "key %s left after deleting nginx", k)
		}
		waitFor(t, s, "nginx2.default.fed.svc.example.com.", []string{"10.0.0.1", "10.0.0.2"})
	})
}

// TestAllPluginsLoad starts the binary with every plugin of the build in the
// Corefile, the cache among them, and checks health, readiness, metrics and
// an answer.
func TestAllPluginsLoad(t *testing.T) {
	ctx := context.Background()
	etcd := etcdtest.Start(t)
	s := startServer(t, etcd.Endpoint, "cache 30", "loadbalance", "reload 2s")
	provider, err := coredns.New(etcd.Client, "", []string{"example.com."})
	require.NoError(t, err)
	zone, err := provider.Zone(ctx, "example.com.")
	require.NoError(t, err)
	require.NoError(t, zone.StartChangeset().Add(dnsprovider.RecordSet{
		Name: "www.example.com.", Type: dnsprovider.A, TTL: 60, Rrdatas: []string{"192.0.2.1", "192.0.2.2"},
	}).Apply(ctx))

	waitFor(t, s, "www.example.com.", []string{"192.0.2.1", "192.0.2.2"})
	require.NoError(t, httpOK("http://"+s.health+"/health"))
	require.NoError(t, httpOK("http://"+s.ready+"/ready"))
	require.NoError(t, poll.Until(ctx, waitTimeout, "metrics of the cache plugin", func(context.Context) error {
		body, err := httpGet("http://" + s.metrics + "/metrics")
		if err != nil {
			return err
		}
		if !strings.Contains(body, "coredns_cache_") || !strings.Contains(body, "coredns_dns_requests_total") {
			return fmt.Errorf("no coredns_cache_ or coredns_dns_requests_total metric yet")
		}
		return nil
	}))
}
