package agent_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// agentWithHA joins cluster2 (unjoined from fed by then) through its agent
// to a second federation, run with --ha: two apiservers share one port,
// and the agent holds a tunnel to each. Either apiserver killed, the
// member is still reached through the other, during a burst too.
func agentWithHA(t *testing.T, u *fedenv.User, env *memberenv.Environment) {
	const fed = "fedha"
	member := []string{"cluster2"}
	start := time.Now()
	u.InitFederation(fed, "--ha")
	u.MustKubefed("join", "cluster2", "--context="+fed, "--connection=agent", "--agent=local", "--server-address="+unreachable)
	u.WaitClusterStatus(fed, 2*time.Minute, map[string]string{"cluster2": "Ready"})
	t.Logf("the HA federation and its agent member were up in %s", time.Since(start).Round(100*time.Millisecond))
	f := fedenv.NewFixture(t, u, env.Clients(func(cfg *rest.Config) { cfg.QPS, cfg.Burst = 50, 100 }), fed, converge)
	plane := u.Plane(fed)
	apiservers := plane.Instances(processplane.APIServer)
	require.Len(t, apiservers, 2, "an HA plane runs two apiservers")

	for i, apiserver := range apiservers {
		// Each apiserver holds its own tunnel of the agent before one
		// goes, so the other needs no redial to reach the member.
		waitTunnelOnEachAPIServer(t, u, fed, "cluster2")
		killed := time.Now()
		require.NoError(t, plane.Kill(apiserver))
		name := fmt.Sprintf("after-%d", i)
		f.Apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: default}\ndata: {killed: " + apiserver + "}\n")
		f.WaitIn(member, configMaps, "default", name, func(*unstructured.Unstructured) error { return nil })
		u.WaitClusterStatus(fed, time.Minute, map[string]string{"cluster2": "Ready"})
		t.Logf("%s killed: a new ConfigMap reached cluster2 through the other apiserver %s later", apiserver, time.Since(killed).Round(100*time.Millisecond))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		require.NoError(t, plane.StartInstance(ctx, apiserver))
		cancel()
	}

	t.Run("an apiserver killed mid-burst: nothing lost, nothing extra", func(t *testing.T) {
		burstWithFault(t, federationClient(t, u, fed), f, member, "fault-ha-apiserver",
			func() { require.NoError(t, plane.Kill(apiservers[0])) },
			func() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				require.NoError(t, plane.StartInstance(ctx, apiservers[0]))
			})
	})
}

// apiserverStreak is how many GET /metrics in a row, each on a new
// connection to the port the apiservers share (the kernel picks which of
// the two answers), must each show the tunnel: 16 leave an apiserver
// without it unnoticed with probability 2^-16.
const apiserverStreak = 16

// waitTunnelOnEachAPIServer waits until every apiserver of fed says in its
// metrics that it holds a tunnel of cluster.
func waitTunnelOnEachAPIServer(t *testing.T, u *fedenv.User, fed, cluster string) {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: u.Kubeconfig}, &clientcmd.ConfigOverrides{CurrentContext: fed}).ClientConfig()
	require.NoError(t, err)
	tlsConfig, err := rest.TLSConfigFor(cfg)
	require.NoError(t, err)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true}}
	held := fmt.Sprintf("federation_agent_tunnels{cluster=%q} 1", cluster)
	require.NoError(t, poll.Until(context.Background(), time.Minute, "a tunnel of "+cluster+" on each apiserver", func(ctx context.Context) error {
		for i := range apiserverStreak {
			resp, err := client.Get(cfg.Host + "/metrics")
			if err != nil {
				return err
			}
			body, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil {
				return err
			}
			if !strings.Contains(string(body), held) {
				return fmt.Errorf("after %d apiservers answered with a tunnel, one had none", i)
			}
		}
		return nil
	}))
}
