package upgrade_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// TestRollingUpgradeOfAnHAFederation upgrades an HA federation of the
// previous release (kubefed init --ha: three etcd members, two apiservers,
// two controller managers) one process at a time with the tree's kubefed
// restart: kubectl is answered throughout, the controller managers' lease
// ends with one of the new processes, and the members see no write to the
// copies already in sync.
func TestRollingUpgradeOfAnHAFederation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts member clusters")
	}
	members := []string{"cluster1", "cluster2"}
	old := fedenv.NewUser(t, previous.Bin)
	env := fedenv.WithMembers(t, old, memberenv.DefaultClusters(2, 1))
	old.InitFederation("fed", "--ha")
	old.JoinAll("fed", members...)
	f := fedenv.NewFixture(t, old, env.Clients(nil), "fed", converge)
	f.Apply(`apiVersion: v1
kind: Namespace
metadata: {name: roll}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: roll}
data: {color: blue}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: roll}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "registry.example/web:1.0"}]
`)
	f.WaitIn(members, configMaps, "roll", "settings", nil)
	f.WaitIn(members, deployments, "roll", "web", nil)
	mark := fedenv.SettledMemberWrites(t, env, members, 5*time.Second, converge)
	before := leaseHolder(t, &f)

	// kubectl keeps asking while the processes roll.
	var (
		mu               sync.Mutex
		answered, failed int
		failures         []string
	)
	ctx, stop := context.WithCancel(context.Background())
	var asking sync.WaitGroup
	asking.Go(func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < 1200; i++ { // bounded: 10 minutes at most
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			_, err := old.Kubectl().Run(ctx, "--context=fed", "--request-timeout=5s", "get", "configmap", "settings", "-n", "roll", "-o", "name")
			mu.Lock()
			if err == nil {
				answered++
			} else if ctx.Err() == nil {
				failed++
				failures = append(failures, err.Error())
			}
			mu.Unlock()
		}
	})
	current := *old
	current.Bin = binDir
	start := time.Now()
	out := current.MustKubefed("restart", "fed")
	took := time.Since(start)
	stop()
	asking.Wait()
	t.Logf("kubefed restart took %s:\n%s", took.Round(time.Second), out)
	restarted := regexp.MustCompile(`(?m)^(\S+) restarted`).FindAllStringSubmatch(out, -1)
	assert.Len(t, restarted, 7, "3 etcd members, 2 apiservers, 2 controller managers")
	t.Logf("kubectl during the roll: %d answered, %d failed %v", answered, failed, failures)
	assert.Zero(t, failed, "the federation answers throughout")
	assert.Positive(t, answered)

	assert.Contains(t, current.ServerVersion("fed"), fedenv.Version)
	after := leaseHolder(t, &f)
	assert.NotEqual(t, before, after, "a new controller manager leads")
	f.Apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: after-roll, namespace: roll}\ndata: {k: v}\n")
	f.WaitIn(members, configMaps, "roll", "after-roll", nil)
	fedenv.NoMemberWritesFor(t, env, members, mark, quietWindow, "after-roll")
	logged, err := env.FederationWritesSince(members, mark)
	require.NoError(t, err)
	assert.Contains(t, strings.Join(logged, "\n"), "roll/after-roll", "the members' logs see the federation's writes")
}

// leaseHolder is the holder of the controller managers' lease.
func leaseHolder(t *testing.T, f *fedenv.Fixture) string {
	t.Helper()
	holder := f.Kubectl("-n", "federation-system", "get", "lease", "federation-controller-manager", "-o", "jsonpath={.spec.holderIdentity}")
	require.NotEmpty(t, holder, "a controller manager leads")
	return holder
}
