package workloads_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// eventsNamespace holds the objects of TestMemberEvents.
const eventsNamespace = "member-events"

// seeWhy bounds how long a member's warning, and a failing condition of a
// member's copy, may take to show at the federation.
const seeWhy = 30 * time.Second

// TestMemberEvents checks that the members' warnings about a federated
// Deployment's copies and the pods they make show on the federated
// Deployment, naming the cluster, as does a condition; and that 1,000
// identical member warnings are one event at the federation, written a
// few times.
func TestMemberEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("starts member clusters")
	}
	start := time.Now()
	u := fedenv.NewUser(t, binDir)
	specs := memberenv.DefaultClusters(3, 1)
	env := fedenv.WithMembers(t, u, specs)
	u.InitFederation("fed")
	u.JoinAll("fed", three...)
	f := newFixture(t, u, env)
	f.Apply(fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", eventsNamespace))
	f.WaitIn(three, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", eventsNamespace, nil)
	t.Logf("setting up took %s", time.Since(start))

	t.Run("a member's quota and another's nodes: their warnings and a condition on the federated Deployment", func(t *testing.T) {
		f := f.in(t)
		// cluster2's admin allows no pods there; only cluster1's nodes
		// are in the zone the pods ask for.
		f.memberKubectl("cluster2", "-n", eventsNamespace, "create", "quota", "no-pods", "--hard=pods=0")
		f.Apply(pinnedDeployment("web", 3, specs[0].Zones[0]))
		f.WaitIn(three, deployments, eventsNamespace, "web", nil)
		copied := time.Now()

		describe := ""
		require.NoError(t, poll.Until(context.Background(), seeWhy, "the members' warnings in kubectl describe at the federation", func(ctx context.Context) error {
			out, err := f.User.Kubectl().Run(ctx, "--context=fed", "-n", eventsNamespace, "describe", "deployment", "web")
			if err != nil {
				return err
			}
			describe = out
			for _, want := range []string{"FailedCreate", `cluster2: Error creating: pods "web-`, "exceeded quota: no-pods",
				"FailedScheduling", "cluster3: 0/1 nodes are available"} {
				if !strings.Contains(out, want) {
					return fmt.Errorf("no %q in\n%s", want, out)
				}
			}
			return nil
		}))
		t.Logf("the members' warnings showed %s after the copies were made:\n%s", time.Since(copied).Round(time.Millisecond), eventsOf(describe))
		assert.NotContains(t, describe, "cluster1:", "cluster1 runs its pod: nothing to say")

		events := f.Kubectl("-n", eventsNamespace, "get", "events", "--field-selector=involvedObject.name=web,type=Warning",
			"-o", `jsonpath={range .items[*]}{.involvedObject.kind} {.source.host} {.reason}: {.message}{"\n"}{end}`)
		assert.Contains(t, events, "Deployment cluster3 FailedScheduling: cluster3: ", "on the federated Deployment, from cluster3")

		condition := ""
		require.NoError(t, poll.Until(context.Background(), seeWhy, "a ReplicaFailure condition naming cluster2", func(ctx context.Context) error {
			out, err := f.User.Kubectl().Run(ctx, "--context=fed", "-n", eventsNamespace, "get", "deployment", "web", "-o",
				`jsonpath={.status.conditions[?(@.type=="ReplicaFailure")].status} {.status.conditions[?(@.type=="ReplicaFailure")].reason} {.status.conditions[?(@.type=="ReplicaFailure")].message}`)
			if err != nil {
				return err
			}
			condition = out
			if !strings.HasPrefix(out, `True FailedCreate cluster2: pods "web-`) || !strings.Contains(out, "exceeded quota: no-pods") {
				return fmt.Errorf("ReplicaFailure is %q", out)
			}
			return nil
		}))
		t.Logf("condition: %s", condition)
	})

	t.Run("1,000 identical warnings in a member are one event at the federation, written a few times", func(t *testing.T) {
		f := f.in(t)
		fed := fedKubeClient(t, f.User.Kubeconfig)
		copyOf, err := f.Member("cluster1").Resource(deployments).Namespace(eventsNamespace).Get(context.Background(), "web", metav1.GetOptions{})
		require.NoError(t, err)
		fedWeb, err := fed.AppsV1().Deployments(eventsNamespace).Get(context.Background(), "web", metav1.GetOptions{})
		require.NoError(t, err)

		// Every write of the event at the federation is a watch event.
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		w, err := fed.CoreV1().Events(eventsNamespace).Watch(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web,reason=E2EFlood"})
		require.NoError(t, err)
		defer w.Stop()
		writes := make(chan *corev1.Event, 100)
		go func() {
			defer close(writes)
			for e := range w.ResultChan() {
				if ev, ok := e.Object.(*corev1.Event); ok && (e.Type == watch.Added || e.Type == watch.Modified) {
					writes <- ev
				}
			}
		}()
		metricBefore := memberEventWrites(t, f.User, "cluster1")

		flooded := time.Now()
		floodMember(t, env, "cluster1", copyOf, 1000)
		t.Logf("1,000 warnings created in cluster1 in %s", time.Since(flooded).Round(time.Millisecond))

		var seen []*corev1.Event
		require.NoError(t, poll.Until(context.Background(), 2*time.Minute, "one event with count 1000 at the federation", func(context.Context) error {
			for {
				select {
				case ev, ok := <-writes:
					if !ok {
						return poll.Abort(fmt.Errorf("the watch of the federation's events ended"))
					}
					seen = append(seen, ev)
					continue
				default:
				}
				break
			}
			if len(seen) == 0 {
				return fmt.Errorf("no write yet")
			}
			if last := seen[len(seen)-1]; last.Count != 1000 {
				return fmt.Errorf("count %d after %d writes", last.Count, len(seen))
			}
			return nil
		}))
		t.Logf("count 1000 at the federation %s after the first warning, in %d writes (counts %v)",
			time.Since(flooded).Round(time.Millisecond), len(seen), counts(seen))

		names := map[string]bool{}
		for _, ev := range seen {
			names[ev.Name] = true
		}
		assert.Len(t, names, 1, "one event")
		last := seen[len(seen)-1]
		assert.Equal(t, fedWeb.UID, last.InvolvedObject.UID, "on the federated Deployment")
		assert.Equal(t, "cluster1: synthetic warning from the e2e test", last.Message)
		assert.LessOrEqual(t, len(seen), 4, "a create and a few patches, not 1,000 writes")

		metricAfter := memberEventWrites(t, f.User, "cluster1")
		assert.Equal(t, float64(len(seen)), metricAfter-metricBefore,
			"the controller manager's count of its writes agrees with what the federation saw")
		list, err := fed.CoreV1().Events(eventsNamespace).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=web,reason=E2EFlood"})
		require.NoError(t, err)
		assert.Len(t, list.Items, 1)
	})
	t.Logf("the whole test took %s", time.Since(start))
}

// pinnedDeployment is a Deployment whose pods ask for a zone.
func pinnedDeployment(name string, replicas int, zone string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: %s}
spec:
  replicas: %d
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec:
      nodeSelector: {%s: %s}
      containers: [{name: app, image: nginx:1.25}]
`, name, eventsNamespace, replicas, name, name, memberenv.ZoneLabel, zone)
}

// floodMember creates n identical Warning events about obj in a member,
// as its admin, a few at a time.
func floodMember(t *testing.T, env *memberenv.Environment, cluster string, obj *unstructured.Unstructured, n int) {
	t.Helper()
	fast := env.Clients(func(cfg *rest.Config) { cfg.QPS, cfg.Burst, cfg.Timeout = 500, 500, 10*time.Second })
	client, err := fast.Dynamic(cluster)
	require.NoError(t, err)
	events := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace(obj.GetNamespace())
	now := time.Now().UTC().Format(time.RFC3339)
	const parallel = 8
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for p := range parallel {
		wg.Go(func() {
			for i := p; i < n; i += parallel {
				ev := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "v1", "kind": "Event",
					"metadata": map[string]any{"name": fmt.Sprintf("%s.flood-%04d", obj.GetName(), i), "namespace": obj.GetNamespace()},
					"involvedObject": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": obj.GetName(),
						"namespace": obj.GetNamespace(), "uid": string(obj.GetUID())},
					"type": "Warning", "reason": "E2EFlood", "message": "synthetic warning from the e2e test", "count": int64(1),
					"firstTimestamp": now, "lastTimestamp": now, "source": map[string]any{"component": "e2e"},
				}}
				if _, err := events.Create(context.Background(), ev, metav1.CreateOptions{}); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	require.Empty(t, errs, "creating the warnings in %s", cluster)
}

// memberEventWrites reads the controller manager's count of its event
// writes for a cluster.
func memberEventWrites(t *testing.T, u *fedenv.User, cluster string) float64 {
	t.Helper()
	body, err := u.ControllerManagerMetrics("fed")
	require.NoError(t, err)
	byCluster, err := fedenv.MetricByLabel(body, "federation_member_events_writes_total", "cluster", nil)
	require.NoError(t, err)
	return byCluster[cluster]
}

// fedKubeClient is a typed client of the federation's kubectl context.
func fedKubeClient(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: "fed"}).ClientConfig()
	require.NoError(t, err)
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return client
}

func counts(events []*corev1.Event) []int32 {
	out := make([]int32, len(events))
	for i, ev := range events {
		out[i] = ev.Count
	}
	return out
}

// eventsOf is the Events part of kubectl describe's output.
func eventsOf(describe string) string {
	if i := strings.Index(describe, "Events:"); i >= 0 {
		return describe[i:]
	}
	return describe
}
