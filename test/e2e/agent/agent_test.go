package agent_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/federation-v1/federation/pkg/localprocess"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// all are the suite's members: cluster1 dialled by the federation,
// cluster2 joined with an agent, cluster3 registered by its own admin.
var all = []string{"cluster1", "cluster2", "cluster3"}

// converge bounds how long propagation may take here.
const converge = 60 * time.Second

var (
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// unreachable is the address the agent member's Cluster records: it does
// not resolve (.invalid, RFC 2606), so the federation could not dial the
// member if it tried; only the agent, in the member's network, reaches it.
const unreachable = "https://cluster2.invalid:6443"

func TestAgentMembers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts member clusters")
	}
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(3, 1))
	initOut := u.InitFederation("fed", "--dns-provider=coredns", "--dns-zone-name=example.com.")
	m := regexp.MustCompile(`is answering at: (\S+)`).FindStringSubmatch(initOut)
	require.NotNil(t, m, initOut)
	dnsServer := m[1]
	u.MustKubefed("join", "cluster1", "--context=fed")
	out := u.MustKubefed("join", "cluster2", "--context=fed", "--connection=agent", "--agent=local", "--server-address="+unreachable)
	assert.Contains(t, out, `cluster "cluster2" created, reached through its agent`)
	u.WaitClusterStatus("fed", 2*time.Minute, map[string]string{"cluster1": "Ready", "cluster2": "Ready"})
	f := fedenv.NewFixture(t, u, env.Clients(func(cfg *rest.Config) { cfg.QPS, cfg.Burst = 50, 100 }), "fed", converge)
	// cluster3's agent runs on its own, outside the plane's folder.
	agent3 := filepath.Join(t.TempDir(), "agent3")
	t.Cleanup(func() {
		for _, p := range localprocess.FindMentioning(agent3, map[string]bool{processplane.AgentProgram: true}) {
			_ = p.Stop(5 * time.Second)
		}
	})

	t.Run("the member's admin registers with a token, and the cluster is used once accepted", func(t *testing.T) {
		out := u.MustKubefed("token", "create", "cluster3", "--context=fed", "--ttl=10m", "--cluster-context=cluster3")
		line := regexp.MustCompile(`kubefed register .*`).FindString(out)
		require.NotEmpty(t, line, out)
		register := append(strings.Fields(line)[1:], "--agent=local", "--data-dir="+agent3)
		out = u.MustKubefed(register...)
		assert.Contains(t, out, "kubefed accept cluster3")
		require.NoError(t, poll.Until(context.Background(), time.Minute, "cluster3's pending certificate request", func(ctx context.Context) error {
			csrs := f.Kubectl("get", "csr", "-o", "custom-columns=NAME:.metadata.name,CONDITION:.status.conditions[*].type,USER:.spec.username", "--no-headers")
			if !strings.Contains(csrs, "system:bootstrap:") || !strings.Contains(csrs, "<none>") {
				return fmt.Errorf("csrs: %s", csrs)
			}
			return nil
		}))
		status, err := u.ClusterTable(context.Background(), "fed")
		require.NoError(t, err)
		assert.NotEqual(t, "Ready", status["cluster3"][0], "not used before it is accepted")

		u.MustKubefed("accept", "cluster3", "--context=fed")
		u.WaitClusterStatus("fed", 2*time.Minute, map[string]string{"cluster3": "Ready"})

		// The token was good for one certificate.
		out, err = u.Kubefed(register...)
		require.Error(t, err)
		assert.Contains(t, out, "unknown, expired or already used")
	})

	t.Run("the federation cannot dial the agent member, and keeps no credential of it", func(t *testing.T) {
		table := f.Kubectl("get", "clusters")
		assert.Regexp(t, `cluster1\s+Ready\s+.*Direct`, table)
		assert.Regexp(t, `cluster2\s+Ready\s+.*Agent`, table)
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		_, err := client.Get(unreachable + "/readyz")
		require.Error(t, err, "the address the Cluster records is not reachable from the federation's side")
		assert.Contains(t, err.Error(), "no such host")
		assert.NotContains(t, f.Kubectl("get", "cluster", "cluster2", "-o", "yaml"), "secretRef")
		secrets := f.Kubectl("get", "secrets", "-n", "federation-system", "-o", "name")
		assert.NotContains(t, secrets, "cluster2-", "no credential of cluster2 at the federation")
	})

	t.Run("join --refresh brings the agent member's objects up to this kubefed", func(t *testing.T) {
		refreshAgentMember(t, u, env)
	})

	t.Run("a ConfigMap reaches both members, and goes with its deletion", func(t *testing.T) {
		f.Apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\ndata: {color: blue}\n")
		f.WaitIn(all, configMaps, "default", "settings", func(o *unstructured.Unstructured) error {
			if v, _, _ := unstructured.NestedString(o.Object, "data", "color"); v != "blue" {
				return fmt.Errorf("color %q", v)
			}
			return nil
		})
		f.Kubectl("delete", "configmap", "settings", "-n", "default")
		f.WaitAbsent(all, configMaps, "default", "settings")
	})

	t.Run("a Deployment is divided between the direct and the agent member, and its status comes back", func(t *testing.T) {
		f.Apply(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: registry.k8s.io/pause:3.10}]}
`)
		f.WaitIn(all, deployments, "default", "web", func(o *unstructured.Unstructured) error {
			if n, _, _ := unstructured.NestedInt64(o.Object, "spec", "replicas"); n != 2 {
				return fmt.Errorf("%d replicas", n)
			}
			return nil
		})
		var total int64
		for _, c := range all {
			obj, err := f.MemberObject(context.Background(), c, deployments, "default", "web")
			require.NoError(t, err)
			n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
			assert.EqualValues(t, 2, n, "cluster %s", c)
			total += n
		}
		assert.EqualValues(t, 6, total)
		require.NoError(t, poll.Until(context.Background(), 2*time.Minute, "6 ready replicas at the federation", func(ctx context.Context) error {
			ready := f.Kubectl("get", "deploy", "web", "-n", "default", "-o", "jsonpath={.status.readyReplicas}")
			if ready != "6" {
				return fmt.Errorf("ready %q", ready)
			}
			return nil
		}))
	})

	t.Run("a warning about the agent member's copy shows on the federated Deployment, through the tunnel", func(t *testing.T) {
		copyOf, err := f.MemberObject(context.Background(), "cluster2", deployments, "default", "web")
		require.NoError(t, err)
		require.NotNil(t, copyOf)
		warning := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Event",
			"metadata": map[string]any{"name": "web.agent-warning", "namespace": "default"},
			"involvedObject": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "default",
				"uid": string(copyOf.GetUID())},
			"type": "Warning", "reason": "E2EAgentWarning", "message": "seen in the agent member", "count": int64(1),
		}}
		_, err = f.Member("cluster2").Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace("default").
			Create(context.Background(), warning, metav1.CreateOptions{})
		require.NoError(t, err)
		f.WaitEvents("web", "E2EAgentWarning", "cluster2: seen in the agent member")
	})

	t.Run("a LoadBalancer Service of agent members answers in DNS", func(t *testing.T) {
		f.Apply(nginx)
		// The load-balancer simulator gives cluster N's first Service 127.1.N.1.
		expectDNS(t, dnsServer, map[string][]string{
			"nginx.default.fed.svc.example.com.":              {"127.1.1.1", "127.1.2.1", "127.1.3.1"},
			"nginx.default.fed.svc.europe-west1.example.com.": {"127.1.3.1"},
		})
	})

	t.Run("agent killed: Offline, saying the tunnel is down; restarted: Ready, nothing rewritten", func(t *testing.T) {
		f.Apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept, namespace: default}\ndata: {color: green}\n")
		f.WaitIn([]string{"cluster2"}, configMaps, "default", "kept", func(*unstructured.Unstructured) error { return nil })
		plane := u.Plane("fed")
		agent := processplane.AgentInstance("cluster2")
		before := configMapWrites(t, u, "cluster2")
		require.NoError(t, plane.Kill(agent))
		u.WaitClusterStatus("fed", time.Minute, map[string]string{"cluster2": "Offline"})
		reason := f.Kubectl("get", "cluster", "cluster2", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].reason}`)
		assert.Equal(t, "TunnelDown", reason)
		require.NoError(t, plane.StartInstance(context.Background(), agent))
		u.WaitClusterStatus("fed", time.Minute, map[string]string{"cluster2": "Ready"})
		// The member's caches start again and every copy is compared:
		// none is written, they were in sync.
		err := poll.Until(context.Background(), 20*time.Second, "the end of the quiet window", func(context.Context) error {
			if now := configMapWrites(t, u, "cluster2"); now != before {
				return poll.Abort(fmt.Errorf("%v ConfigMap writes to cluster2 after its agent came back", now-before))
			}
			return fmt.Errorf("quiet")
		})
		require.ErrorContains(t, err, "timed out")
		f.WaitIn([]string{"cluster2"}, configMaps, "default", "kept", func(*unstructured.Unstructured) error { return nil })
	})

	t.Run("the agent killed mid-burst: nothing lost, nothing extra", func(t *testing.T) {
		plane, agent := u.Plane("fed"), processplane.AgentInstance("cluster2")
		burstWithFault(t, federationClient(t, u, "fed"), f, all, "fault-agent",
			func() { require.NoError(t, plane.Kill(agent)) },
			func() { require.NoError(t, plane.StartInstance(context.Background(), agent)) })
	})

	t.Run("the apiserver holding the tunnel killed mid-burst: nothing lost, nothing extra", func(t *testing.T) {
		plane := u.Plane("fed")
		burstWithFault(t, federationClient(t, u, "fed"), f, all, "fault-apiserver",
			func() {
				require.NoError(t, plane.Kill(processplane.APIServer))
				// The embedded etcd's client port can stay taken for a
				// while after the kill (connections of federation-dns to
				// it, closed from our side only): start until it binds.
				start := time.Now()
				require.NoError(t, poll.Until(context.Background(), 2*time.Minute, "the killed apiserver started again", func(ctx context.Context) error {
					return plane.StartInstance(ctx, processplane.APIServer)
				}))
				t.Logf("the apiserver served again %s after the kill", time.Since(start).Round(100*time.Millisecond))
			},
			func() {})
	})

	t.Run("refusals", func(t *testing.T) { refusals(t, u, f) })

	t.Run("kubefed strays reaches the agent member through its tunnel", func(t *testing.T) {
		// A copy of the federation's in cluster2 whose federated object
		// never existed: a clone of a real copy under another name.
		ctx := context.Background()
		f.Apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: propagated, namespace: default}\ndata: {color: red}\n")
		f.WaitIn([]string{"cluster2"}, configMaps, "default", "propagated", func(*unstructured.Unstructured) error { return nil })
		kept, err := f.MemberObject(ctx, "cluster2", configMaps, "default", "propagated")
		require.NoError(t, err)
		orphan := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": kept.Object["data"]}}
		orphan.SetName("orphan")
		orphan.SetNamespace("default")
		orphan.SetLabels(kept.GetLabels())
		orphan.SetAnnotations(kept.GetAnnotations())
		_, err = f.Member("cluster2").Resource(configMaps).Namespace("default").Create(ctx, orphan, metav1.CreateOptions{})
		require.NoError(t, err)
		out := u.MustKubefed("strays", "--context=fed")
		assert.Regexp(t, `cluster2\s+ConfigMap\s+default\s+orphan`, out)
		assert.NotContains(t, out, "skipped")
		out = u.MustKubefed("strays", "--context=fed", "--clean")
		assert.Contains(t, out, "deleted")
		f.WaitAbsent([]string{"cluster2"}, configMaps, "default", "orphan")
		f.WaitIn([]string{"cluster2"}, configMaps, "default", "propagated", func(*unstructured.Unstructured) error { return nil })
	})

	t.Run("unjoin cuts the agent member off and stops its agent", func(t *testing.T) {
		// Kept to try again once cluster2 is unjoined.
		oldCert := keepAgentCertificate(t, u, "cluster2")
		u.MustKubefed("unjoin", "cluster2", "--context=fed")
		plane := u.Plane("fed")
		assert.NotContains(t, plane.Agents, "cluster2")
		assert.False(t, plane.Alive(processplane.AgentInstance("cluster2")))
		tokens := f.Kubectl("get", "secrets", "-n", "federation-system", "-l", "federation.k8s.io/agent-cluster=cluster2", "-o", "name")
		assert.Empty(t, strings.TrimSpace(tokens))

		// A new cluster2: the old agent's certificate, still valid, is
		// not its agent's.
		u.MustKubefed("token", "create", "cluster2", "--context=fed")
		err := oldCert.Discovery().RESTClient().Get().AbsPath("/apis/federation/v1beta1/clusters/cluster2/tunnel").Do(context.Background()).Error()
		require.Error(t, err)
		assert.True(t, apierrors.IsForbidden(err), "%v", err)
		assert.Contains(t, err.Error(), "not issued for the current cluster cluster2")
	})

	t.Run("with --ha, the agent member is reached through whichever apiserver runs", func(t *testing.T) {
		agentWithHA(t, u, env)
	})
}

// configMapWrites is the controller manager's count of ConfigMap writes
// to cluster.
func configMapWrites(t *testing.T, u *fedenv.User, cluster string) float64 {
	t.Helper()
	body, err := u.ControllerManagerMetrics("fed")
	require.NoError(t, err)
	counts, err := fedenv.MetricByLabel(body, "federation_sync_member_writes_total", "verb", map[string]string{"cluster": cluster, "type": "configmaps"})
	require.NoError(t, err)
	total := 0.0
	for _, v := range counts {
		total += v
	}
	return total
}

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

// expectDNS waits until the federation's DNS server answers each name
// with exactly its addresses.
func expectDNS(t *testing.T, server string, want map[string][]string) {
	t.Helper()
	require.NoError(t, poll.Until(context.Background(), 90*time.Second, fmt.Sprintf("DNS answers %v", want), func(ctx context.Context) error {
		for name, ips := range want {
			msg := new(dns.Msg)
			msg.SetQuestion(name, dns.TypeA)
			r, _, err := (&dns.Client{Timeout: 2 * time.Second}).ExchangeContext(ctx, msg, server)
			if err != nil {
				return err
			}
			var got []string
			for _, rr := range r.Answer {
				if a, ok := rr.(*dns.A); ok {
					got = append(got, a.A.String())
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, ips) {
				return fmt.Errorf("%s answered %v, want %v", name, got, ips)
			}
		}
		return nil
	}))
}
