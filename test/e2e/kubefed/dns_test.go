package kubefed_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/dnsprovider"
	"github.com/federation-v1/federation/pkg/dnsprovider/coredns"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
)

// lookupA asks server for the A records of name.
func lookupA(ctx context.Context, server, name string) ([]string, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	c := &dns.Client{Timeout: 2 * time.Second}
	r, _, err := c.ExchangeContext(ctx, m, server)
	if err != nil {
		return nil, err
	}
	var ips []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			ips = append(ips, a.A.String())
		}
	}
	return ips, nil
}

// TestInitWithDNS: init --dns-provider=coredns runs federation-dns on the
// control plane's etcd; records written with the v1 provider configuration
// it leaves (coredns-provider.conf) are answered, also after a restart.
func TestInitWithDNS(t *testing.T) {
	ctx := context.Background()
	u := fedenv.NewUser(t, binDir)
	t.Cleanup(func() { _, _ = u.Kubefed("delete", "dnsfed", "--local") })
	out := u.MustKubefed("init", "dnsfed", "--local", "--dns-provider=coredns", "--dns-zone-name=example.com.")
	m := regexp.MustCompile(`Federation DNS server for example.com. is answering at: (\S+)`).FindStringSubmatch(out)
	require.NotNil(t, m, "init names the DNS server's address:\n%s", out)
	server := m[1]

	f, err := os.Open(filepath.Join(u.PlaneDir("dnsfed"), "coredns-provider.conf"))
	require.NoError(t, err)
	cfg, err := coredns.ParseConfig(f)
	f.Close()
	require.NoError(t, err)
	assert.Equal(t, []string{"example.com."}, cfg.Zones())
	assert.Equal(t, []string{server}, cfg.CoreDNSEndpoints())

	provider, err := coredns.NewFromConfig(cfg)
	require.NoError(t, err)
	defer provider.Close()
	zone, err := provider.Zone(ctx, "example.com.")
	require.NoError(t, err)
	name := "nginx.default.dnsfed.svc.example.com."
	require.NoError(t, zone.StartChangeset().Upsert(dnsprovider.RecordSet{
		Name: name, Type: dnsprovider.A, TTL: dnsprovider.DefaultTTL, Rrdatas: []string{"127.1.1.1", "127.1.3.1"},
	}).Apply(ctx))

	answers := func(want ...string) {
		t.Helper()
		require.NoError(t, poll.Until(ctx, 20*time.Second, fmt.Sprintf("%s to answer %v", name, want), func(ctx context.Context) error {
			got, err := lookupA(ctx, server, name)
			if err == nil && !assert.ObjectsAreEqual(want, got) {
				err = fmt.Errorf("answered %v", got)
			}
			return err
		}))
	}
	answers("127.1.1.1", "127.1.3.1")

	u.MustKubefed("stop", "dnsfed")
	_, err = lookupA(ctx, server, name)
	assert.Error(t, err, "a stopped federation's DNS server does not answer")
	u.MustKubefed("start", "dnsfed")
	answers("127.1.1.1", "127.1.3.1")
}

func TestInitRejectsBadDNSFlags(t *testing.T) {
	u := fedenv.NewUser(t, binDir)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--dns-provider=route53", "--dns-zone-name=example.com."}, `--dns-provider "route53"`},
		{[]string{"--dns-provider=coredns"}, "needs --dns-zone-name"},
		{[]string{"--dns-zone-name=example.com."}, "need --dns-provider=coredns"},
		{[]string{"--dns-provider=coredns", "--dns-zone-name=bad_zone!"}, `--dns-zone-name "bad_zone!"`},
		{[]string{"--dns-provider=coredns", "--dns-zone-name=example.com.", "--dns-provider-config=/nonexistent"}, "--dns-provider-config"},
	} {
		out, err := u.Kubefed(append([]string{"init", "fed", "--local"}, tt.args...)...)
		assert.Error(t, err, "%v", tt.args)
		assert.Contains(t, out, tt.want, "%v", tt.args)
	}
	assert.NoDirExists(t, u.PlaneDir("fed"))
}
