package ownership_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// The members of the suite, both joined to federation "fed".
var members = []string{"cluster1", "cluster2"}

// converge bounds how long propagation may take in these tests.
const converge = 45 * time.Second

// cases are the subtests of TestOwnership by name, registered by the
// files of this package in their init.
var cases = map[string]func(f *fixture){}

// fixture is federation "fed" joined to two members.
type fixture struct {
	t   *testing.T
	u   *fedenv.User
	env *memberenv.Environment
}

// in returns the fixture for subtest t.
func (f *fixture) in(t *testing.T) *fixture {
	c := *f
	c.t = t
	return &c
}

// kubectl runs kubectl with args (give --context) and returns its output
// and error.
func (f *fixture) kubectl(args ...string) (string, error) {
	return f.u.Kubectl().Run(context.Background(), args...)
}

// fed runs kubectl against federation "fed" and fails on error.
func (f *fixture) fed(args ...string) string {
	f.t.Helper()
	out, err := f.kubectl(append([]string{"--context=fed"}, args...)...)
	require.NoError(f.t, err, out)
	return out
}

// apply runs kubectl apply of manifest in context ctx and fails on error.
func (f *fixture) apply(ctx, manifest string) {
	f.t.Helper()
	out, err := f.u.Kubectl().RunWithInput(context.Background(), manifest, "--context="+ctx, "apply", "-f", "-")
	require.NoError(f.t, err, out)
}

// member is a member's admin client.
func (f *fixture) member(cluster string) kubernetes.Interface {
	f.t.Helper()
	c, err := f.env.Client(cluster)
	require.NoError(f.t, err)
	return c
}

// memberDynamic is a member's admin dynamic client.
func (f *fixture) memberDynamic(cluster string) dynamic.Interface {
	f.t.Helper()
	cfg, err := f.env.RESTConfig(cluster)
	require.NoError(f.t, err)
	c, err := dynamic.NewForConfig(cfg)
	require.NoError(f.t, err)
	return c
}

// TestOwnership starts two members and federation "fed" joined to both,
// and runs every registered case as a subtest. Cases clean up what they
// make; a case that needs another federation starts it itself.
func TestOwnership(t *testing.T) {
	if testing.Short() {
		t.Skip("starts member clusters")
	}
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(len(members), 1))
	u.InitFederation("fed")
	u.JoinAll("fed", members...)
	f := &fixture{t: t, u: u, env: env}

	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) { cases[name](f.in(t)) })
	}
}

// writeCounters returns a federation's federation_sync_member_writes_total
// for cluster by verb.
func (f *fixture) writeCounters(fed, cluster string) map[string]float64 {
	f.t.Helper()
	body, err := f.u.ControllerManagerMetrics(fed)
	require.NoError(f.t, err)
	out, err := fedenv.MetricByLabel(body, "federation_sync_member_writes_total", "verb", map[string]string{"cluster": cluster})
	require.NoError(f.t, err)
	return out
}
