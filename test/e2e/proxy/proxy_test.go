package proxy_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/federation-v1/federation/pkg/memberrbac"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/kubectl"
	"github.com/federation-v1/federation/test/memberenv"
)

// The suite's people and places.
const (
	fed    = "fed"
	tenant = "tenant" // edit in teamA
	viewer = "viewer" // view in teamA
	teamA  = "team-a"
	teamB  = "team-b"
	// squatted exists at the federation, where tenant may edit it, but
	// cluster1's own admin made it there first: the federation neither
	// created nor adopted it in cluster1.
	squatted = "squatted"
)

// members: cluster1 the federation dials, cluster2 reached through its agent.
var members = []string{"cluster1", "cluster2"}

// converge bounds how long propagation and pods may take here.
const converge = 90 * time.Second

type fixture struct {
	fedenv.Fixture
	env *memberenv.Environment
}

// as runs kubectl with context and returns its output and error.
func (f *fixture) as(context string, args ...string) (string, error) {
	return f.User.Kubectl().Run(f.T.Context(), append([]string{"--context=" + context}, args...)...)
}

// must runs kubectl with context and fails on error.
func (f *fixture) must(context string, args ...string) string {
	f.T.Helper()
	out, err := f.as(context, args...)
	require.NoError(f.T, err, out)
	return out
}

// refused runs kubectl with context, and checks that the federation
// refused it (403) naming want.
func (f *fixture) refused(context, want string, args ...string) {
	f.T.Helper()
	out, err := f.as(context, args...)
	require.Error(f.T, err, "kubectl %s as %s: %s", strings.Join(args, " "), context, out)
	assert.Contains(f.T, err.Error(), "(Forbidden)", "kubectl %s as %s", strings.Join(args, " "), context)
	assert.Contains(f.T, err.Error(), want, "kubectl %s as %s", strings.Join(args, " "), context)
}

// proxied is what the members logged of requests the proxy sent for tenants.
func (f *fixture) proxied() map[string][]string {
	f.T.Helper()
	out := map[string][]string{}
	for _, c := range members {
		reqs, err := f.env.Member(c).ProxiedRequests()
		require.NoError(f.T, err)
		out[c] = reqs
	}
	return out
}

// runningPod waits for the one Running pod of app in ns of cluster and
// returns its name.
func (f *fixture) runningPod(cluster, ns, app string) string {
	f.T.Helper()
	client, err := f.env.Client(cluster)
	require.NoError(f.T, err)
	var name string
	require.NoError(f.T, poll.Until(f.T.Context(), converge, fmt.Sprintf("a Running pod of %s in %s/%s", app, cluster, ns), func(ctx context.Context) error {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				name = p.Name
				return nil
			}
		}
		return fmt.Errorf("%d pods, none Running", len(pods.Items))
	}))
	return name
}

func deployment(ns, name string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec: {containers: [{name: c, image: registry.k8s.io/pause:3.10, ports: [{containerPort: 80}]}]}
`, ns, name, replicas)
}

func TestSeeingIntoMembers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts member clusters")
	}
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(2, 1))
	u.InitFederation(fed)
	u.MustKubefed("join", "cluster1", "--context="+fed)
	u.MustKubefed("join", "cluster2", "--context="+fed, "--connection=agent", "--agent=local", "--server-address=https://cluster2.invalid:6443")
	u.WaitClusterStatus(fed, 2*time.Minute, map[string]string{"cluster1": "Ready", "cluster2": "Ready"})
	f := &fixture{Fixture: fedenv.NewFixture(t, u, env.Clients(func(cfg *rest.Config) {}), fed, converge), env: env}

	member1, err := env.Client("cluster1")
	require.NoError(t, err)
	_, err = member1.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: squatted}}, metav1.CreateOptions{})
	require.NoError(t, err)
	for _, ns := range []string{teamA, teamB, squatted} {
		f.must(fed, "create", "namespace", ns)
	}
	f.must(fed, "create", "rolebinding", "tenant-edit", "--clusterrole=edit", "--user="+tenant, "-n", teamA)
	f.must(fed, "create", "rolebinding", "tenant-edit", "--clusterrole=edit", "--user="+tenant, "-n", squatted)
	f.must(fed, "create", "rolebinding", "viewer-view", "--clusterrole=view", "--user="+viewer, "-n", teamA)
	u.AddUser(fed, tenant)
	u.AddUser(fed, viewer)
	f.Apply(deployment(teamA, "web", 2))
	f.Apply(deployment(teamB, "db", 2))
	pods := map[string]string{}
	for _, c := range members {
		pods[c] = f.runningPod(c, teamA, "web")
		f.runningPod(c, teamB, "db")
	}

	t.Run("kubefed kubeconfig writes a context per member; a tenant, who may not list clusters, names them", func(t *testing.T) {
		out := u.MustKubefed("kubeconfig", "--context="+fed)
		for _, c := range members {
			assert.Contains(t, out, fed+"/"+c)
		}
		assert.Contains(t, u.MustKubefed("kubeconfig", "--context="+fed), "unchanged", "a second run changes nothing")
		out, err := u.Kubefed("kubeconfig", "--context="+tenant)
		require.Error(t, err, out)
		assert.Contains(t, out, "--cluster")
		for _, user := range []string{tenant, viewer} {
			u.MustKubefed("kubeconfig", "--context="+user, "--cluster=cluster1,cluster2")
		}
		contexts := f.must(fed, "config", "get-contexts", "-o", "name")
		for _, want := range []string{"fed/cluster1", "fed/cluster2", "tenant/cluster1", "tenant/cluster2", "viewer/cluster2"} {
			assert.Contains(t, contexts, want)
		}
	})

	t.Run("an admin reads pods, describes them and reads events in every member through its context", func(t *testing.T) {
		f := f.in(t)
		for _, c := range members {
			out := f.must(fed+"/"+c, "get", "pods", "-n", teamA, "-o", "name")
			assert.Contains(t, out, "pod/"+pods[c], c)
			assert.Contains(t, f.must(fed+"/"+c, "get", "nodes", "-o", "name"), "node/"+c+"-node-1", "an admin reads what the member's account may: %s", c)
			describe := f.must(fed+"/"+c, "describe", "pod", pods[c], "-n", teamA)
			assert.Contains(t, describe, "Node:", c)
			assert.Contains(t, describe, c+"-node-1", c)
		}
	})

	t.Run("kubefed get lists every member's pods with a CLUSTER column, as the admin and as a tenant", func(t *testing.T) {
		for _, user := range []string{fed, tenant} {
			args := []string{"get", "pods", "-l", "app=web", "-n", teamA, "--context=" + user}
			if user == tenant {
				args = append(args, "--cluster=cluster1,cluster2")
			}
			out := u.MustKubefed(args...)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			require.Len(t, lines, 3, out)
			assert.Regexp(t, `^CLUSTER\s+NAME\s+READY\s+STATUS`, lines[0])
			for i, c := range members {
				assert.Regexp(t, fmt.Sprintf(`^%s\s+%s\s+1/1\s+Running`, c, pods[c]), lines[i+1], "as %s", user)
			}
		}
		out, err := u.Kubefed("get", "pods", "-n", teamB, "--context="+tenant, "--cluster=cluster1,cluster2")
		require.Error(t, err, out)
		assert.Contains(t, out, `may not list pods in namespace team-b`)
	})

	t.Run("an admin follows logs, runs exec and port-forward in every member through its context", func(t *testing.T) {
		f := f.in(t)
		for _, c := range members {
			ctx := fed + "/" + c
			assert.Equal(t, memberenv.PodLogLine(c)+"\n", f.must(ctx, "logs", "-n", teamA, pods[c]), c)
			assert.Equal(t, "hello\n", f.must(ctx, "exec", "-n", teamA, pods[c], "--", "echo", "hello"), c)
			assert.Equal(t, c, strings.TrimSpace(f.must(ctx, "exec", "-n", teamA, pods[c], "--", "cat", memberenv.ExecClusterFile)), "exec ran in %s", c)

			follow := kubectl.Start(t, u.Kubeconfig, "--context="+ctx, "logs", "-f", "-n", teamA, pods[c])
			require.NoError(t, follow.WaitFor(t.Context(), "the log so far through the proxy", func(out string) bool {
				return strings.Contains(out, memberenv.PodLogLine(c))
			}))
			line := "followed through the federation in " + c
			require.NoError(t, env.AppendPodLog(c, line))
			require.NoError(t, follow.WaitFor(t.Context(), "the appended line through the proxy", func(out string) bool {
				return strings.Contains(out, line)
			}))

			assert.Equal(t, memberenv.PortForwardAnswer(c), portForward(t, u, ctx, teamA, pods[c]), c)
		}
		for _, c := range members {
			logged := strings.Join(f.proxied()[c], "\n")
			assert.Contains(t, logged, fmt.Sprintf("/api/v1/namespaces/%s/pods/%s/exec", teamA, pods[c]))
			assert.Contains(t, logged, "as "+memberrbac.ProxyUser(fed), "an admin's exec goes as the proxy user in %s", c)
		}
	})

	t.Run("kubefed logs shows every member's pods of a Deployment, each line naming its cluster and pod", func(t *testing.T) {
		out := u.MustKubefed("logs", "deploy/web", "-n", teamA, "--context="+fed)
		for _, c := range members {
			assert.Contains(t, out, fmt.Sprintf("[%s/%s] %s", c, pods[c], memberenv.PodLogLine(c)))
		}
	})

	t.Run("a tenant reads logs and runs exec in its namespace; a viewer reads logs and may not exec", func(t *testing.T) {
		f := f.in(t)
		for _, c := range members {
			assert.Contains(t, f.must(tenant+"/"+c, "logs", "-n", teamA, "deploy/web"), memberenv.PodLogLine(c), c)
			assert.Equal(t, c, strings.TrimSpace(f.must(tenant+"/"+c, "exec", "-n", teamA, pods[c], "--", "cat", memberenv.ExecClusterFile)), c)
			assert.Contains(t, f.must(viewer+"/"+c, "logs", "-n", teamA, pods[c]), memberenv.PodLogLine(c), c)
			f.refused(viewer+"/"+c, `user "viewer" may not create pods/exec in namespace team-a`, "exec", "-n", teamA, pods[c], "--", "echo", "hello")
		}
	})

	t.Run("a tenant reads pods of its namespace in every member, as the proxy user, named in the member's log", func(t *testing.T) {
		f := f.in(t)
		for _, c := range members {
			out := f.must(tenant+"/"+c, "get", "pods", "-n", teamA, "-o", "name")
			assert.Contains(t, out, "pod/"+pods[c], c)
			assert.NotContains(t, out, "db-", c)
		}
		proxied := f.proxied()
		for _, c := range members {
			want := fmt.Sprintf("list /api/v1/namespaces/%s/pods?limit=500 as %s for [%s]", teamA, memberrbac.ProxyUser(fed), tenant)
			assert.Contains(t, proxied[c], want, "%s logged the tenant's list as the proxy user", c)
		}
	})

	t.Run("a tenant is refused by the federation, and nothing reaches the member, outside what it may read", func(t *testing.T) {
		f := f.in(t)
		before := f.proxied()
		for _, c := range members {
			ctx := tenant + "/" + c
			f.refused(ctx, `user "tenant" may not list pods in namespace team-b`, "get", "pods", "-n", teamB)
			f.refused(ctx, "Secrets are never read through the proxy", "get", "secrets", "-n", teamA)
			f.refused(ctx, "only namespaced objects", "get", "nodes")
			f.refused(ctx, "only namespaced objects", "get", "pods", "-A")
			f.refused(ctx, "change objects through the federation", "delete", "pod", pods[c], "-n", teamA)
			f.refused(ctx, `user "tenant" may not get deployments.apps in namespace team-b`, "logs", "-n", teamB, "deploy/db")
		}
		assert.Equal(t, before, f.proxied(), "no refused request reached a member")
		f.refused(tenant+"/cluster1", "not one federation \"fed\" created or an admin adopted", "get", "pods", "-n", squatted)
	})
}

// in returns the fixture for subtest t.
func (f *fixture) in(t *testing.T) *fixture {
	c := *f
	c.T = t
	return &c
}

// portForward runs kubectl port-forward to pod's port 80 through context,
// and returns what an HTTP GET through it answers.
func portForward(t *testing.T, u *fedenv.User, context, ns, pod string) string {
	t.Helper()
	pf := kubectl.Start(t, u.Kubeconfig, "--context="+context, "port-forward", "-n", ns, "pod/"+pod, ":80")
	forwarding := regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> 80`)
	var port string
	require.NoError(t, pf.WaitFor(t.Context(), "kubectl port-forward to listen", func(out string) bool {
		if m := forwarding.FindStringSubmatch(out); m != nil {
			port = m[1]
		}
		return port != ""
	}))
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://127.0.0.1:" + port + "/")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	return string(body)
}
