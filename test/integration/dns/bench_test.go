package dns_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/federation-v1/federation/pkg/dnsprovider/coredns"
	"github.com/federation-v1/federation/pkg/dnsrecords"
	"github.com/federation-v1/federation/pkg/processplane"
	"github.com/federation-v1/federation/test/etcdtest"
)

// The query load: this many concurrent UDP clients, each sending its next
// query when the previous answer arrives, for queryWindow per server.
const (
	queryClients = 16
	queryWindow  = 5 * time.Second
	queryRounds  = 3
)

// loadFigures are what one window of queries gave.
type loadFigures struct {
	qps      float64
	p50, p99 time.Duration
	errors   int
}

// BenchmarkQueryThroughput sends the same query load, on loopback, to
// federation-dns with the cache plugin (as kubefed init configures it),
// to federation-dns without it (every answer read from etcd), and to a
// reference: a minimal miekg/dns server answering the same records from
// memory, the most this load generator and loopback allow. It prints
// queries/s, p50 and p99 of each and the ratios against the reference.
// The load is fixed: run it once, with -benchtime 1x.
func BenchmarkQueryThroughput(b *testing.B) {
	ctx := context.Background()
	etcd := etcdtest.Start(b)
	provider, err := coredns.New(etcd.Client, "/skydns", []string{"example.com."})
	if err != nil {
		b.Fatal(err)
	}
	zone, err := provider.Zone(ctx, "example.com.")
	if err != nil {
		b.Fatal(err)
	}
	cfg := dnsrecords.Config{Federation: "fed", Domain: "example.com.", TTL: 180}
	svc := dnsrecords.Service{Namespace: "default", Name: "nginx"}
	ips := []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}
	desired, err := dnsrecords.Desired(ctx, cfg, svc, []dnsrecords.Cluster{
		{Name: "c1", Ready: true, HasReadyEndpoints: true, Region: "us-east1", Zones: []string{"us-east1-b"}, IngressIPs: ips},
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := dnsrecords.Apply(ctx, cfg, svc, zone, desired); err != nil {
		b.Fatal(err)
	}

	servers := []struct{ name, metric, addr string }{
		{"federation-dns, cache", "qps-cache", startServer(b, etcd.Endpoint, fmt.Sprintf("cache %d", processplane.DNSCacheSeconds)).addr},
		{"federation-dns, no cache", "qps-nocache", startServer(b, etcd.Endpoint).addr},
		{"reference (in-memory)", "qps-reference", startReference(b, global, ips)},
	}
	for _, s := range servers {
		if _, err := exchange(s.addr, "udp", global, dns.TypeA); err != nil {
			b.Fatalf("%s at %s: %v", s.name, s.addr, err)
		}
	}
	// Rounds alternate between the servers; the median round is reported.
	rounds := make([][]loadFigures, len(servers))
	for range queryRounds {
		for i, s := range servers {
			f, err := queryLoad(s.addr, global, queryClients, queryWindow)
			if err != nil {
				b.Fatalf("%s: %v", s.name, err)
			}
			rounds[i] = append(rounds[i], f)
		}
	}
	ref := medianLoad(rounds[len(servers)-1])
	fmt.Printf("\nDNS query load: %d UDP clients, %s per round, median of %d rounds, A %s\n", queryClients, queryWindow, queryRounds, global)
	fmt.Printf("%-26s %10s %10s %10s %8s %10s %10s\n", "server", "queries/s", "p50", "p99", "errors", "qps ratio", "p99 ratio")
	for i, s := range servers {
		f := medianLoad(rounds[i])
		fmt.Printf("%-26s %10.0f %10s %10s %8d %9.2fx %9.2fx\n", s.name, f.qps, f.p50.Round(time.Microsecond),
			f.p99.Round(time.Microsecond), f.errors, f.qps/ref.qps, float64(f.p99)/float64(ref.p99))
		b.ReportMetric(f.qps, s.metric)
	}
}

// queryLoad sends A queries for name from clients concurrent clients for
// window and returns the throughput and latency percentiles of the answers
// that were NOERROR with at least one record.
func queryLoad(addr, name string, clients int, window time.Duration) (loadFigures, error) {
	var (
		mu        sync.Mutex
		latencies []time.Duration
		failures  int
		wg        sync.WaitGroup
	)
	deadline := time.Now().Add(window)
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("udp", addr)
			if err != nil {
				mu.Lock()
				failures++
				mu.Unlock()
				return
			}
			defer conn.Close()
			c := &dns.Client{Timeout: 2 * time.Second}
			dc := &dns.Conn{Conn: conn}
			var mine []time.Duration
			bad := 0
			for time.Now().Before(deadline) {
				m := new(dns.Msg)
				m.SetQuestion(name, dns.TypeA)
				t0 := time.Now()
				r, _, err := c.ExchangeWithConn(m, dc)
				if err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
					bad++
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			failures += bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if len(latencies) == 0 {
		return loadFigures{}, fmt.Errorf("no answer in %s (%d failures)", window, failures)
	}
	slices.Sort(latencies)
	at := func(q float64) time.Duration { return latencies[int(q*float64(len(latencies)-1))] }
	return loadFigures{qps: float64(len(latencies)) / elapsed.Seconds(), p50: at(0.50), p99: at(0.99), errors: failures}, nil
}

func medianLoad(rounds []loadFigures) loadFigures {
	sorted := slices.Clone(rounds)
	slices.SortFunc(sorted, func(a, b loadFigures) int {
		switch {
		case a.qps < b.qps:
			return -1
		case a.qps > b.qps:
			return 1
		}
		return 0
	})
	return sorted[len(sorted)/2]
}

// startReference serves name's A records from memory on a free loopback
// UDP port, and returns the address.
func startReference(b *testing.B, name string, ips []string) string {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var answer []dns.RR
	for _, ip := range ips {
		answer = append(answer, &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 180}, A: net.ParseIP(ip)})
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		if len(r.Question) == 1 && r.Question[0].Name == name && r.Question[0].Qtype == dns.TypeA {
			m.Answer = answer
		} else {
			m.Rcode = dns.RcodeNameError
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	b.Cleanup(func() { _ = srv.Shutdown() })
	return pc.LocalAddr().String()
}
