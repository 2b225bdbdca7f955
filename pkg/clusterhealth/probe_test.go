package clusterhealth

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/federation-v1/federation/test/memberenv"
)

// TestProbeRealMember probes a real member cluster: healthy with its zones,
// then unreachable once its apiserver stops, within the timeout.
func TestProbeRealMember(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a member cluster")
	}
	ctx := context.Background()
	clusters := memberenv.DefaultClusters(1, 3)
	require.NoError(t, memberenv.ApplyTopology(clusters, []string{"cluster1=europe-west1:europe-west1-c,europe-west1-b"}))
	env, err := memberenv.Start(ctx, memberenv.Options{Dir: filepath.Join(t.TempDir(), "env"), Clusters: clusters, Logf: t.Logf})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, env.Stop()) })
	config, err := env.RESTConfig("cluster1")
	require.NoError(t, err)

	obs := Probe(ctx, config, 5*time.Second)
	assert.Equal(t, Observation{Reachable: true, Healthy: true,
		Zones: []string{"europe-west1-b", "europe-west1-c"}, Region: "europe-west1"}, obs)

	wrong := rest.CopyConfig(config)
	wrong.BearerToken = "not-a-token"
	obs = Probe(ctx, wrong, 5*time.Second)
	assert.Equal(t, NotReady, VerdictOf(obs), "a member that refuses our credentials is reachable but not ready")
	assert.Contains(t, obs.Message, "401")

	require.NoError(t, env.StopAPIServer("cluster1"))
	start := time.Now()
	obs = Probe(ctx, config, 2*time.Second)
	assert.Less(t, time.Since(start), 3*time.Second, "a probe never outlasts its timeout")
	assert.Equal(t, Offline, VerdictOf(obs))
	assert.Contains(t, obs.Message, "unreachable")
}
