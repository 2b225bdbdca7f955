package security_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"

	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// The identities of the suite. The admin is the one kubefed init made
// (context "fed"); the others get client certificates from the
// federation's CA and a context of their name.
const (
	// tenant is bound to the aggregated "edit" role in tenantNamespace.
	tenant = "tenant"
	// viewer is bound to "view" in tenantNamespace.
	viewer = "viewer"
	// nobody authenticates but has no binding.
	nobody = "nobody"
	// teamAdmin is bound to "admin" in teamAdminNamespace.
	teamAdmin          = "bob"
	teamAdminNamespace = "team-b"
	tenantNamespace    = "team-a"
	member             = "cluster1"
)

// converge bounds how long propagation may take in these tests.
const converge = 45 * time.Second

// attacks are the subtests of TestSecurity by name, registered by the
// files of this package in their init.
var attacks = map[string]func(f *fixture){}

// fixture is federation "fed" with one member, cluster1, and the suite's
// identities.
type fixture struct {
	t   *testing.T
	u   *fedenv.User
	env *memberenv.Environment
	// dnsServer is the address of the federation's DNS server, which
	// answers for dnsZone.
	dnsServer string
}

// dnsZone is the federation's DNS zone.
const dnsZone = "example.com."

// in returns the fixture for subtest t.
func (f *fixture) in(t *testing.T) *fixture {
	c := *f
	c.t = t
	return &c
}

// as runs kubectl as user ("fed" is the admin) and returns its output
// and error.
func (f *fixture) as(user string, args ...string) (string, error) {
	return f.u.Kubectl().Run(context.Background(), append([]string{"--context=" + user}, args...)...)
}

// applyAs runs kubectl apply of manifest as user.
func (f *fixture) applyAs(user, manifest string) (string, error) {
	return f.u.Kubectl().RunWithInput(context.Background(), manifest, "--context="+user, "apply", "-f", "-")
}

// admin runs kubectl as the federation's admin and fails on error.
func (f *fixture) admin(args ...string) string {
	f.t.Helper()
	out, err := f.as("fed", args...)
	require.NoError(f.t, err, out)
	return out
}

// memberClient is the member's admin client.
func (f *fixture) memberClient() kubernetes.Interface {
	f.t.Helper()
	c, err := f.env.Client(member)
	require.NoError(f.t, err)
	return c
}

// addUser issues user a client certificate from the federation's CA and
// adds a kubeconfig context of the user's name.
func (f *fixture) addUser(user string, groups ...string) {
	f.t.Helper()
	f.u.AddUser("fed", user, groups...)
}

// TestSecurity starts the federation and its member, sets up the
// identities, and runs every registered attack as a subtest.
func TestSecurity(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a member cluster")
	}
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(1, 1))
	out := u.InitFederation("fed", "--dns-provider=coredns", "--dns-zone-name="+dnsZone)
	m := regexp.MustCompile(`is answering at: (\S+)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	u.MustKubefed("join", member, "--context=fed")
	u.WaitClusterStatus("fed", time.Minute, map[string]string{member: "Ready"})
	// Optional references re-read within the steps' patience.
	u.RestartControllerManager("fed", "--optional-reference-recheck=2s")
	f := &fixture{t: t, u: u, env: env, dnsServer: m[1]}

	f.admin("create", "namespace", tenantNamespace)
	f.admin("create", "rolebinding", "tenant-edit", "--clusterrole=edit", "--user="+tenant, "--namespace="+tenantNamespace)
	f.admin("create", "rolebinding", "viewer-view", "--clusterrole=view", "--user="+viewer, "--namespace="+tenantNamespace)
	f.admin("create", "namespace", teamAdminNamespace)
	f.admin("create", "rolebinding", "bob-admin", "--clusterrole=admin", "--user="+teamAdmin, "--namespace="+teamAdminNamespace)
	for _, user := range []string{tenant, viewer, nobody, teamAdmin} {
		f.addUser(user)
	}

	names := make([]string, 0, len(attacks))
	for name := range attacks {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) { attacks[name](f.in(t)) })
	}
}

// configMap is a ConfigMap manifest.
func configMap(ns, name, data string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {%s}\n", name, ns, data)
}
