package dns_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/federation-v1/federation/pkg/dnsprovider/coredns"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// converge bounds how long a change may take to show in DNS: propagation,
// the members' load balancers and endpoints, status and the DNS writer.
const converge = 90 * time.Second

// answer is what a name resolves to: its addresses (sorted) and the CNAME
// it starts with, if any; rcode is the response code.
type answer struct {
	rcode int
	cname string
	ips   []string
}

func (a answer) String() string {
	return fmt.Sprintf("%s cname=%q ips=%v", dns.RcodeToString[a.rcode], a.cname, a.ips)
}

func query(ctx context.Context, server, name string) (answer, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	c := &dns.Client{Timeout: 2 * time.Second}
	r, _, err := c.ExchangeContext(ctx, m, server)
	if err != nil {
		return answer{}, err
	}
	a := answer{rcode: r.Rcode}
	for _, rr := range r.Answer {
		switch v := rr.(type) {
		case *dns.A:
			a.ips = append(a.ips, v.A.String())
		case *dns.CNAME:
			if a.cname == "" && strings.EqualFold(v.Hdr.Name, name) {
				a.cname = v.Target
			}
		}
	}
	slices.Sort(a.ips)
	return a, nil
}

// expect waits until every name answers as wanted.
func expect(t *testing.T, server string, want map[string]answer) {
	t.Helper()
	require.NoError(t, poll.Until(context.Background(), converge, fmt.Sprintf("DNS answers %v", want), func(ctx context.Context) error {
		for name, w := range want {
			got, err := query(ctx, server, name)
			if err != nil {
				return err
			}
			if got.rcode != w.rcode || got.cname != w.cname || !slices.Equal(got.ips, w.ips) {
				return fmt.Errorf("%s answered %s, want %s", name, got, w)
			}
		}
		return nil
	}))
}

// nginx's replicas are divided over the clusters; with rebalance every
// selected Ready cluster runs one again after a step that took them away.
const nginx = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  namespace: default
  annotations:
    federation.kubernetes.io/deployment-preferences: '{"rebalance":true,"clusters":{"*":{"weight":1}}}'
spec:
  replicas: 3
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      containers: [{name: nginx, image: nginx}]
---
apiVersion: v1
kind: Service
metadata:
  name: nginx
  namespace: default
spec:
  type: LoadBalancer
  selector: {app: nginx}
  ports: [{port: 80}]
`

// federationWithDNS starts 3 member clusters (two regions) and a federation
// "federation" with DNS for example.com. that all of them joined; it
// returns the user, the members and the DNS server's address.
func federationWithDNS(t testing.TB) (*fedenv.User, *memberenv.Environment, string) {
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(3, 2))
	out := u.InitFederation("federation", "--dns-provider=coredns", "--dns-zone-name=example.com.")
	m := regexp.MustCompile(`is answering at: (\S+)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	for _, c := range []string{"cluster1", "cluster2", "cluster3"} {
		u.MustKubefed("join", c, "--context=federation")
	}
	u.WaitClusterStatus("federation", 30*time.Second, map[string]string{"cluster1": "Ready", "cluster2": "Ready", "cluster3": "Ready"})
	return u, env, m[1]
}

func TestServiceDNSAcrossZonesAndRegions(t *testing.T) {
	ctx := context.Background()
	u, env, server := federationWithDNS(t)
	k := u.Kubectl()
	_, err := k.RunWithInput(ctx, nginx, "--context=federation", "apply", "-f", "-")
	require.NoError(t, err)

	const (
		global    = "nginx.default.federation.svc.example.com."
		usEast    = "nginx.default.federation.svc.us-east1.example.com."
		europe    = "nginx.default.federation.svc.europe-west1.example.com."
		zoneB     = "nginx.default.federation.svc.us-east1-b.us-east1.example.com."
		zoneC     = "nginx.default.federation.svc.us-east1-c.us-east1.example.com."
		zoneEurop = "nginx.default.federation.svc.europe-west1-b.europe-west1.example.com."
	)
	// The load-balancer simulator gives cluster N's first Service 127.1.N.1.
	ips := func(s ...string) answer { return answer{ips: s} }
	cname := func(target string, s ...string) answer { return answer{cname: target, ips: s} }
	expect(t, server, map[string]answer{
		global:    ips("127.1.1.1", "127.1.2.1", "127.1.3.1"),
		usEast:    ips("127.1.1.1", "127.1.2.1"),
		europe:    ips("127.1.3.1"),
		zoneB:     ips("127.1.1.1"),
		zoneC:     ips("127.1.2.1"),
		zoneEurop: ips("127.1.3.1"),
	})

	t.Run("a cluster without ready endpoints falls back by CNAME", func(t *testing.T) {
		// The Deployment leaves cluster2 (the Service stays): no endpoints there.
		_, err := k.Run(ctx, "--context=federation", "label", "clusters", "--all", "--overwrite", "has-nginx=yes")
		require.NoError(t, err)
		_, err = k.Run(ctx, "--context=federation", "label", "cluster", "cluster2", "--overwrite", "has-nginx=no")
		require.NoError(t, err)
		_, err = k.Run(ctx, "--context=federation", "annotate", "deployment", "nginx", "--overwrite",
			`federation.alpha.kubernetes.io/cluster-selector=[{"key":"has-nginx","operator":"==","values":["yes"]}]`)
		require.NoError(t, err)
		expect(t, server, map[string]answer{
			zoneC:  cname(usEast, "127.1.1.1"),
			usEast: ips("127.1.1.1"),
			global: ips("127.1.1.1", "127.1.3.1"),
		})

		// And a whole region: europe-west1 loses its only cluster's pods.
		_, err = k.Run(ctx, "--context=federation", "label", "cluster", "cluster3", "--overwrite", "has-nginx=no")
		require.NoError(t, err)
		expect(t, server, map[string]answer{
			europe:    cname(global, "127.1.1.1"),
			zoneEurop: cname(europe, "127.1.1.1"),
			global:    ips("127.1.1.1"),
		})

		_, err = k.Run(ctx, "--context=federation", "annotate", "deployment", "nginx", "federation.alpha.kubernetes.io/cluster-selector-")
		require.NoError(t, err)
		expect(t, server, map[string]answer{global: ips("127.1.1.1", "127.1.2.1", "127.1.3.1")})
	})

	t.Run("an Offline cluster's addresses leave the answers", func(t *testing.T) {
		// The propagation controller drops cluster1 from the service-ingresses
		// annotation once it is not Ready; its zone must still fall back.
		require.NoError(t, env.StopAPIServer("cluster1"))
		u.WaitClusterStatus("federation", 45*time.Second, map[string]string{"cluster1": "Offline"})
		expect(t, server, map[string]answer{
			global: ips("127.1.2.1", "127.1.3.1"),
			zoneB:  cname(usEast, "127.1.2.1"),
		})
		require.NoError(t, env.StartAPIServer(ctx, "cluster1"))
		expect(t, server, map[string]answer{global: ips("127.1.1.1", "127.1.2.1", "127.1.3.1")})
	})

	t.Run("deleting the Service removes its names", func(t *testing.T) {
		_, err := k.Run(ctx, "--context=federation", "delete", "service", "nginx", "--wait=false")
		require.NoError(t, err)
		nx := answer{rcode: dns.RcodeNameError}
		expect(t, server, map[string]answer{global: nx, usEast: nx, zoneB: nx, europe: nx})
		assert.Empty(t, skydnsKeys(t, u), "the Service's /skydns keys and their empty folders are gone")
	})
}

// skydnsKeys lists the keys under /skydns in the etcd the federation's DNS
// records go to.
func skydnsKeys(t testing.TB, u *fedenv.User) []string {
	client, prefix := recordsEtcd(t, u)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := client.Get(ctx, prefix+"/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	require.NoError(t, err)
	var keys []string
	for _, kv := range resp.Kvs {
		keys = append(keys, string(kv.Key))
	}
	return keys
}

// recordsEtcd connects to the etcd the federation's DNS records go to (the
// plane's coredns-provider.conf says where) and returns the key prefix.
func recordsEtcd(t testing.TB, u *fedenv.User) (*clientv3.Client, string) {
	f, err := os.Open(filepath.Join(u.PlaneDir("federation"), processplane.ProviderConfig))
	require.NoError(t, err)
	defer f.Close()
	cfg, err := coredns.ParseConfig(f)
	require.NoError(t, err)
	client, err := cfg.EtcdClient() // with the controller manager's etcd client certificate
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	return client, cfg.PathPrefix()
}
