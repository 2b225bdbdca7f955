// Package memberenv_test checks the member-cluster environment the way a person
// uses it: the memberenv command (make up / make down) and the real kubectl.
package memberenv_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/kubectl"
	"github.com/federation-v1/federation/test/memberenv"
)

// memberenvCommand runs the memberenv binary on the test's run folder.
type memberenvCommand struct {
	path, dir string
}

func (m memberenvCommand) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(m.path, append(args, "--dir="+m.dir)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "memberenv %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

func TestMemberEnvironmentAsAPersonUsesIt(t *testing.T) {
	ctx := context.Background()
	root, err := memberenv.RepoRoot()
	require.NoError(t, err)
	bins, err := memberenv.EnsureBinaries(ctx, root, t.Logf)
	require.NoError(t, err)
	env := memberenvCommand{path: bins.MemberEnv, dir: filepath.Join(t.TempDir(), "run")}
	t.Cleanup(func() {
		// Also when the test fails half-way: nothing may survive it.
		out, err := exec.Command(env.path, "down", "--dir="+env.dir).CombinedOutput()
		assert.NoError(t, err, "memberenv down:\n%s", out)
		assert.Empty(t, memberenv.Leftovers(env.dir), "processes left after memberenv down")
	})

	start := time.Now()
	out := env.run(t, "up", "--clusters=3")
	t.Logf("memberenv up took %s", time.Since(start).Round(time.Second))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	require.True(t, strings.HasPrefix(last, "export KUBECONFIG="), "last line of up is %q", last)
	kc := kubectl.Runner{Kubeconfig: strings.TrimPrefix(last, "export KUBECONFIG=")}

	t.Run("a deployment becomes 3/3 ready within 60s", func(t *testing.T) {
		_, err := kc.Run(ctx, "--context=cluster1", "create", "deployment", "web", "--image=nginx", "--replicas=3")
		require.NoError(t, err)
		require.NoError(t, poll.Until(ctx, 60*time.Second, "deployment web 3/3 ready in cluster1", func(ctx context.Context) error {
			ready, err := kc.Run(ctx, "--context=cluster1", "get", "deployment", "web", "-o", "jsonpath={.status.readyReplicas}")
			if err != nil {
				return err
			}
			if ready != "3" {
				return fmt.Errorf("readyReplicas=%q", ready)
			}
			return nil
		}))
		pods, err := kc.Run(ctx, "--context=cluster1", "get", "pods", "-l", "app=web", "-o", "jsonpath={range .items[*]}{.status.phase} {.spec.nodeName}{\"\\n\"}{end}")
		require.NoError(t, err)
		assert.Len(t, strings.Fields(strings.ReplaceAll(pods, "Running", "")), 3, "every pod runs on a node:\n%s", pods)
	})

	t.Run("nodes show their zones", func(t *testing.T) {
		out, err := kc.Run(ctx, "--context=cluster2", "get", "nodes", "-L", "topology.kubernetes.io/zone", "-L", "failure-domain.beta.kubernetes.io/region")
		require.NoError(t, err)
		rows := strings.Split(strings.TrimSpace(out), "\n")
		require.Len(t, rows, 3, "header and two nodes:\n%s", out)
		assert.Contains(t, rows[0], "ZONE")
		for _, row := range rows[1:] {
			f := strings.Fields(row)
			assert.Equal(t, "Ready", f[1], row)
			assert.Equal(t, []string{"us-east1-c", "us-east1"}, f[len(f)-2:], row)
		}
		out, err = kc.Run(ctx, "--context=cluster3", "get", "nodes", "-o", "jsonpath={.items[*].metadata.labels.topology\\.kubernetes\\.io/region}")
		require.NoError(t, err)
		assert.Equal(t, "europe-west1 europe-west1", out, "cluster3 is in the second region")
	})

	t.Run("a LoadBalancer service gets an external IP and gives it back", func(t *testing.T) {
		externalIP := func(svc string) func(ctx context.Context) (string, error) {
			return func(ctx context.Context) (string, error) {
				return kc.Run(ctx, "--context=cluster3", "get", "service", svc, "-o", "jsonpath={.status.loadBalancer.ingress[*].ip}")
			}
		}
		waitIP := func(svc, want string) {
			t.Helper()
			require.NoError(t, poll.Until(ctx, 30*time.Second, "service "+svc+" to have external IP "+want, func(ctx context.Context) error {
				got, err := externalIP(svc)(ctx)
				if err == nil && got != want {
					err = fmt.Errorf("ingress is %q", got)
				}
				return err
			}))
		}
		_, err := kc.Run(ctx, "--context=cluster3", "create", "deployment", "web", "--image=nginx")
		require.NoError(t, err)
		_, err = kc.Run(ctx, "--context=cluster3", "expose", "deployment", "web", "--port=80", "--type=LoadBalancer")
		require.NoError(t, err)
		waitIP("web", "127.1.3.1")
		out, err := kc.Run(ctx, "--context=cluster3", "get", "service", "web")
		require.NoError(t, err)
		assert.Contains(t, out, "EXTERNAL-IP")
		assert.Contains(t, out, "127.1.3.1")

		_, err = kc.Run(ctx, "--context=cluster3", "expose", "deployment", "web", "--name=web2", "--port=80", "--type=LoadBalancer")
		require.NoError(t, err)
		waitIP("web2", "127.1.3.2")
		_, err = kc.Run(ctx, "--context=cluster3", "delete", "service", "web")
		require.NoError(t, err)
		_, err = kc.Run(ctx, "--context=cluster3", "expose", "deployment", "web", "--name=web3", "--port=80", "--type=LoadBalancer")
		require.NoError(t, err)
		waitIP("web3", "127.1.3.1") // the deleted service's address is free again

		_, err = kc.Run(ctx, "--context=cluster3", "patch", "service", "web2", "-p", `{"spec":{"type":"ClusterIP"}}`)
		require.NoError(t, err)
		waitIP("web2", "")
	})

	t.Run("stopping cluster2's apiserver leaves cluster1 working and keeps cluster2's data", func(t *testing.T) {
		_, err := kc.Run(ctx, "--context=cluster2", "create", "namespace", "survives-restart")
		require.NoError(t, err)
		env.run(t, "stop", "cluster2", "--apiserver-only")

		short := kubectl.Runner{Kubeconfig: kc.Kubeconfig, Timeout: 10 * time.Second}
		_, err = short.Run(ctx, "--context=cluster2", "--request-timeout=3s", "get", "ns")
		assert.Error(t, err, "cluster2 must be unreachable")
		out, err := kc.Run(ctx, "--context=cluster1", "get", "ns")
		require.NoError(t, err)
		assert.Contains(t, out, "default")

		env.run(t, "start", "cluster2", "--apiserver-only")
		out, err = kc.Run(ctx, "--context=cluster2", "get", "ns", "survives-restart", "-o", "name")
		require.NoError(t, err)
		assert.Equal(t, "namespace/survives-restart", strings.TrimSpace(out))
	})

	t.Run("a whole member stops and starts again with its workloads", func(t *testing.T) {
		env.run(t, "stop", "cluster1")
		state, err := memberenv.Load(env.dir)
		require.NoError(t, err)
		for name, p := range state.Member("cluster1").Processes {
			assert.False(t, p.Alive(), "cluster1 %s still runs", name)
		}
		for name, p := range state.Member("cluster3").Processes {
			assert.True(t, p.Alive(), "cluster3 %s stopped with cluster1", name)
		}
		env.run(t, "start", "cluster1")
		out, err := kc.Run(ctx, "--context=cluster1", "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}")
		require.NoError(t, err)
		assert.Equal(t, "3", out)
	})

	env.run(t, "down")
	assert.Empty(t, memberenv.Leftovers(env.dir), "make down must leave no etcd, kube-* or kwok process")
}
