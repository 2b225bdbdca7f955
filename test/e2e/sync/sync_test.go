package sync_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

var (
	namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	services   = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	three      = []string{"cluster1", "cluster2", "cluster3"}
)

func labelled(o *unstructured.Unstructured) error {
	if o.GetLabels()[federationv1beta1.FederationLabel] != "fed" {
		return fmt.Errorf("no %s=fed label: %v", federationv1beta1.FederationLabel, o.GetLabels())
	}
	return nil
}

func notLabelled(o *unstructured.Unstructured) error {
	if _, ok := o.GetLabels()[federationv1beta1.FederationLabel]; ok {
		return fmt.Errorf("still labelled %v", o.GetLabels())
	}
	return nil
}

func configMap(ns, name, annotations, data string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n  annotations: {%s}\ndata: {%s}\n", name, ns, annotations, data)
}

func TestPropagation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts member clusters")
	}
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(4, 1))
	u.InitFederation("fed")
	u.JoinAll("fed", three...)
	f := newFixture(t, u, env)
	for i, c := range three {
		f.Kubectl("label", "cluster", c, fmt.Sprintf("cluster=%d", i+1))
	}
	f.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: e2e}\n")
	f.WaitIn(three, namespaces, "", "e2e", labelled)

	t.Run("federation-system never travels", func(t *testing.T) {
		f := f.in(t)
		for _, c := range three {
			ns, err := f.MemberObject(context.Background(), c, namespaces, "", "federation-system")
			require.NoError(t, err)
			require.NotNil(t, ns, "join creates it")
			require.NoError(t, notLabelled(ns))
		}
	})

	for _, ty := range federatedTypes {
		t.Run(ty.name, func(t *testing.T) {
			f := f.in(t)
			name := "obj-" + ty.name
			f.Apply(ty.manifest("e2e", name))
			f.WaitIn(three, ty.resource, "e2e", name, labelled)
			f.Kubectl("annotate", ty.name, name, "-n", "e2e", "e2e.test/step=2")
			f.WaitIn(three, ty.resource, "e2e", name, hasAnnotation("e2e.test/step", "2"))
			f.Kubectl("delete", ty.name, name, "-n", "e2e", "--wait=false")
			f.WaitAbsent(three, ty.resource, "e2e", name)
			f.waitGoneAtFederation(ty.name, "e2e", name)

			orphan := name + "-orphan"
			f.Apply(ty.manifest("e2e", orphan))
			f.WaitIn(three, ty.resource, "e2e", orphan, labelled)
			f.Kubectl("delete", ty.name, orphan, "-n", "e2e", "--cascade=orphan", "--wait=false")
			f.waitGoneAtFederation(ty.name, "e2e", orphan)
			f.WaitIn(three, ty.resource, "e2e", orphan, notLabelled)
			if ty.resource == atRestHPAs {
				// Its copies stay and keep scaling the target in the
				// members: the target stays theirs there, not divided
				// again by the federation (which would fight them).
				require.NotEmpty(t, f.Kubectl("get", "deployment", orphan, "-n", "e2e", "-o",
					`jsonpath={.metadata.annotations.federation\.kubernetes\.io/hpa-target-cluster-list}`))
			}

			// For the late join below.
			f.Apply(ty.manifest("e2e", "late-"+ty.name))
		})
	}

	t.Run("namespaces", func(t *testing.T) {
		f := f.in(t)
		f.Kubectl("annotate", "namespace", "e2e", "e2e.test/step=2")
		f.WaitIn(three, namespaces, "", "e2e", hasAnnotation("e2e.test/step", "2"))
		f.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: kept}\n")
		f.WaitIn(three, namespaces, "", "kept", labelled)
		f.Kubectl("delete", "namespace", "kept", "--cascade=orphan", "--wait=false")
		f.waitGoneAtFederation("namespace", "", "kept")
		f.WaitIn(three, namespaces, "", "kept", notLabelled)
	})

	t.Run("an ApplySet's parent stays at the federation; the set travels and is pruned everywhere", func(t *testing.T) {
		applySetParentStaysLocal(f.in(t))
	})

	t.Run("kube-system, kube-public and kube-node-lease exist and stay at the federation", func(t *testing.T) {
		systemNamespacesStayLocal(f.in(t))
	})

	t.Run("kubectl apply --prune -l with kubectl's default prune list", func(t *testing.T) {
		legacyPrune(f.in(t))
	})

	t.Run("cluster selector and relabelled clusters", func(t *testing.T) {
		f := f.in(t)
		f.Apply(configMap("e2e", "placed", `federation.alpha.kubernetes.io/cluster-selector: '[{"key":"cluster","operator":"==","values":["1"]}]'`, "k: v"))
		f.WaitIn([]string{"cluster1"}, configMaps, "e2e", "placed", labelled)
		f.WaitAbsent([]string{"cluster2", "cluster3"}, configMaps, "e2e", "placed")
		f.Kubectl("label", "cluster", "cluster1", "cluster=9", "--overwrite")
		f.Kubectl("label", "cluster", "cluster3", "cluster=1", "--overwrite")
		f.WaitIn([]string{"cluster3"}, configMaps, "e2e", "placed", labelled)
		f.WaitAbsent([]string{"cluster1", "cluster2"}, configMaps, "e2e", "placed")
		f.Kubectl("label", "cluster", "cluster1", "cluster=1", "--overwrite")
		f.Kubectl("label", "cluster", "cluster3", "cluster=3", "--overwrite")
		f.WaitIn([]string{"cluster1"}, configMaps, "e2e", "placed", labelled)
		f.WaitAbsent([]string{"cluster2", "cluster3"}, configMaps, "e2e", "placed")
	})

	t.Run("drift is restored and a pre-existing object adopted when asked", func(t *testing.T) {
		f := f.in(t)
		ctx := context.Background()
		pre := &unstructured.Unstructured{}
		pre.SetAPIVersion("v1")
		pre.SetKind("ConfigMap")
		pre.SetName("drift")
		pre.SetNamespace("e2e")
		pre.Object["data"] = map[string]any{"k": "member's own"}
		_, err := f.Member("cluster3").Resource(configMaps).Namespace("e2e").Create(ctx, pre, metav1.CreateOptions{})
		require.NoError(t, err)

		// The member's own object is taken over only because the
		// federated object asks for it (v1 adopted silently).
		f.Apply(configMap("e2e", "drift", "federation.kubernetes.io/conflict-resolution: adopt", "k: v"))
		hasData := func(o *unstructured.Unstructured) error {
			if v, _, _ := unstructured.NestedString(o.Object, "data", "k"); v != "v" {
				return fmt.Errorf("data.k is %q", v)
			}
			return labelled(o)
		}
		f.WaitIn(three, configMaps, "e2e", "drift", hasData)

		require.NoError(t, f.Member("cluster1").Resource(configMaps).Namespace("e2e").Delete(ctx, "drift", metav1.DeleteOptions{}))
		edited, err := f.MemberObject(ctx, "cluster2", configMaps, "e2e", "drift")
		require.NoError(t, err)
		edited.Object["data"] = map[string]any{"k": "edited by hand"}
		_, err = f.Member("cluster2").Resource(configMaps).Namespace("e2e").Update(ctx, edited, metav1.UpdateOptions{})
		require.NoError(t, err)
		f.WaitIn(three, configMaps, "e2e", "drift", hasData)
		f.WaitEvents("drift", "AdoptInCluster", "Recreated ConfigMap e2e/drift in cluster cluster1", "Restored ConfigMap e2e/drift in cluster cluster2")

		// A spec edited by hand: the member bumps the generation.
		f.Apply(workloadManifest("edited"))
		deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
		f.WaitIn(three, deployments, "e2e", "edited", labelled)
		_, err = f.Member("cluster1").Resource(deployments).Namespace("e2e").Patch(ctx, "edited", types.MergePatchType,
			[]byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{})
		require.NoError(t, err)
		f.WaitIn([]string{"cluster1"}, deployments, "e2e", "edited", func(o *unstructured.Unstructured) error {
			if r, _, _ := unstructured.NestedInt64(o.Object, "spec", "replicas"); r != 1 {
				return fmt.Errorf("spec.replicas is %d", r)
			}
			return nil
		})
		f.WaitEvents("edited", "Restored Deployment e2e/edited in cluster cluster1")
	})

	t.Run("kubectl rollout status waits for every member", func(t *testing.T) {
		f := f.in(t)
		f.Apply(workloadManifest("rolled"))
		rollout := func() {
			runner := f.User.Kubectl()
			runner.Timeout = 90 * time.Second
			out, err := runner.Run(context.Background(), "--context=fed", "rollout", "status", "deployment/rolled", "-n", "e2e", "--timeout=60s")
			require.NoError(t, err)
			require.Contains(t, out, "successfully rolled out")
		}
		rollout()
		f.Kubectl("set", "image", "deployment/rolled", "-n", "e2e", "c=registry.k8s.io/pause:3.9")
		rollout()
		f.WaitIn(three, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "e2e", "rolled",
			func(o *unstructured.Unstructured) error {
				if r, _, _ := unstructured.NestedInt64(o.Object, "status", "updatedReplicas"); r != 1 {
					return fmt.Errorf("status.updatedReplicas is %d", r)
				}
				return nil
			})
	})

	t.Run("a stopped member does not hold back the others and catches up", func(t *testing.T) {
		f := f.in(t)
		require.NoError(t, env.StopAPIServer("cluster2"))
		started := false
		defer func() {
			if !started {
				_ = env.StartAPIServer(context.Background(), "cluster2")
			}
		}()
		f.Apply(configMap("e2e", "while-down", "", "k: v"))
		f.Kubectl("annotate", "configmap", "drift", "-n", "e2e", "e2e.test/step=down")
		f.WaitInWithin(15*time.Second, []string{"cluster1", "cluster3"}, configMaps, "e2e", "while-down", labelled)
		f.WaitInWithin(15*time.Second, []string{"cluster1", "cluster3"}, configMaps, "e2e", "drift", hasAnnotation("e2e.test/step", "down"))
		require.NoError(t, env.StartAPIServer(context.Background(), "cluster2"))
		started = true
		f.WaitInWithin(90*time.Second, []string{"cluster2"}, configMaps, "e2e", "while-down", labelled)
		f.WaitInWithin(90*time.Second, []string{"cluster2"}, configMaps, "e2e", "drift", hasAnnotation("e2e.test/step", "down"))
	})

	t.Run("a LoadBalancer Service gets its members' addresses", func(t *testing.T) {
		f := f.in(t)
		// With rebalance its pods return to a cluster that was away in the
		// previous step: every member needs ready endpoints here.
		f.Apply(strings.Replace(workloadManifest("web"), "namespace: e2e}",
			`namespace: e2e, annotations: {federation.kubernetes.io/deployment-preferences: '{"rebalance":true,"clusters":{"*":{"weight":1}}}'}}`, 1))
		f.Apply("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: e2e}\nspec:\n  type: LoadBalancer\n  selector: {app: web}\n  ports: [{port: 80}]\n")
		f.WaitIn(three, services, "e2e", "web", labelled)
		var want []string
		require.NoError(t, poll.Until(context.Background(), converge, "load-balancer addresses in the members", func(ctx context.Context) error {
			want = nil
			for _, c := range three {
				svc, err := f.MemberObject(ctx, c, services, "e2e", "web")
				if err != nil || svc == nil {
					return fmt.Errorf("%s: %v", c, err)
				}
				ingress, _, _ := unstructured.NestedSlice(svc.Object, "status", "loadBalancer", "ingress")
				if len(ingress) == 0 {
					return fmt.Errorf("%s has no address yet", c)
				}
				for _, in := range ingress {
					want = append(want, in.(map[string]any)["ip"].(string))
				}
			}
			return nil
		}))
		require.NoError(t, poll.Until(context.Background(), 75*time.Second, "the federated Service's status and service-ingresses", func(ctx context.Context) error {
			out, err := f.User.Kubectl().Run(ctx, "--context=fed", "get", "service", "web", "-n", "e2e", "-o",
				`jsonpath={.status.loadBalancer.ingress[*].ip}{"\n"}{.metadata.annotations.federation\.kubernetes\.io/service-ingresses}`)
			if err != nil {
				return err
			}
			status, annotation, _ := strings.Cut(out, "\n")
			for _, ip := range want {
				if !strings.Contains(status, ip) {
					return fmt.Errorf("status has %q, not %s", status, ip)
				}
			}
			for _, c := range three {
				if !strings.Contains(annotation, `"cluster":"`+c+`","items":[{"ip"`) {
					return fmt.Errorf("service-ingresses has no ready addresses of %s: %s", c, annotation)
				}
			}
			return nil
		}))
		svc, err := f.MemberObject(context.Background(), "cluster1", services, "e2e", "web")
		require.NoError(t, err)
		require.NotContains(t, svc.GetAnnotations(), "federation.kubernetes.io/service-ingresses")
	})

	t.Run("deleting a namespace empties it everywhere", func(t *testing.T) {
		f := f.in(t)
		f.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: doomed}\n")
		f.WaitIn(three, namespaces, "", "doomed", labelled)
		f.Apply(configMap("doomed", "inside", "", "k: v"))
		f.WaitIn(three, configMaps, "doomed", "inside", labelled)
		f.Kubectl("delete", "namespace", "doomed", "--wait=false")
		f.waitGoneAtFederation("namespace", "", "doomed")
		f.WaitAbsent(three, configMaps, "doomed", "inside")
		f.WaitAbsent(three, namespaces, "", "doomed")
	})

	t.Run("at rest the controller manager writes nothing to members", func(t *testing.T) {
		f := f.in(t)
		var items []string
		for i := range 100 {
			items = append(items, strings.ReplaceAll(configMap("e2e", fmt.Sprintf("rest-%03d", i), "", "k: v"), "\n", "\n  "))
		}
		f.Apply("apiVersion: v1\nkind: List\nitems:\n- " + strings.Join(items, "\n- "))
		f.waitCount(three, configMaps, "e2e", "rest-", 100)
		f.atRest(60 * time.Second)
		metrics := f.metrics()
		for _, want := range []string{`workqueue_depth{name="sync_configmaps"}`, `federation_sync_propagation_seconds_count{type="configmaps"}`,
			`federation_sync_member_writes_total{cluster="cluster1",type="configmaps",verb="apply"}`} {
			require.Contains(t, metrics, want)
		}
	})

	t.Run("a cluster that joins later receives every object", func(t *testing.T) {
		f := f.in(t)
		u.MustKubefed("join", "cluster4", "--context=fed")
		u.WaitClusterStatus("fed", time.Minute, map[string]string{"cluster4": "Ready"})
		f.WaitIn([]string{"cluster4"}, namespaces, "", "e2e", labelled)
		for _, ty := range federatedTypes {
			if ty.name == "horizontalpodautoscalers" {
				// An HPA goes to the clusters that run its target, and the
				// members' HPAs keep their replicas where they are: its
				// target (a Deployment of the same name) is what arrives.
				f.WaitIn([]string{"cluster4"}, deployments, "e2e", "late-"+ty.name, labelled)
				continue
			}
			f.WaitIn([]string{"cluster4"}, ty.resource, "e2e", "late-"+ty.name, labelled)
		}
		f.waitCount([]string{"cluster4"}, configMaps, "e2e", "rest-", 100)
	})

	t.Run("an Offline cluster holds a deletion only for a bounded time", func(t *testing.T) {
		f := f.in(t)
		f.User.RestartControllerManager("fed", "--deletion-wait=15s")
		f.Apply(configMap("e2e", "offline", "", "k: v"))
		f.WaitIn(three, configMaps, "e2e", "offline", labelled)
		require.NoError(t, env.StopAPIServer("cluster3"))
		defer func() { require.NoError(t, env.StartAPIServer(context.Background(), "cluster3")) }()
		u.WaitClusterStatus("fed", 90*time.Second, map[string]string{"cluster3": "Offline"})
		f.Kubectl("delete", "configmap", "offline", "-n", "e2e", "--wait=false")
		f.WaitAbsent([]string{"cluster1", "cluster2"}, configMaps, "e2e", "offline")
		f.waitGoneAtFederation("configmap", "e2e", "offline")
		f.WaitEvents("offline", "Gave up deleting ConfigMap e2e/offline in cluster cluster3")
	})
}

// workloadManifest is a Deployment whose 3 replicas are divided one per
// cluster of three.
func workloadManifest(name string) string {
	return workload("Deployment", "replicas: 3")("e2e", name)
}
