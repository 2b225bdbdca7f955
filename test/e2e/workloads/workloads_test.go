package workloads_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/kubectl"
	"github.com/federation-v1/federation/test/memberenv"
)

// window is the controller manager's --unschedulable-pod-window here.
const window = 5 * time.Second

func TestWorkloads(t *testing.T) {
	if testing.Short() {
		t.Skip("starts member clusters")
	}
	start := time.Now()
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(3, 2))
	u.InitFederation("fed")
	u.JoinAll("fed", three...)
	f := newFixture(t, u, env)
	// Fast health detection and a short unschedulable window, so that the
	// failover and capacity steps take seconds.
	f.cmLog = f.User.RestartControllerManager("fed", "--cluster-monitor-period=2s", "--unschedulable-pod-window="+window.String())
	f.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: e2e}\n")
	t.Logf("setting up took %s", time.Since(start))

	t.Run("no preferences: spread evenly, rollout status and READY at the federation", func(t *testing.T) {
		f := f.in(t)
		f.Apply(deployment("web", 9, ""))
		f.waitReplicas("web", map[string]int64{"cluster1": 3, "cluster2": 3, "cluster3": 3})
		f.rolloutStatus("web")
		out := f.Kubectl("-n", "e2e", "get", "deployment", "web", "--no-headers")
		assert.Equal(t, "9/9", strings.Fields(out)[1], "READY is the members' sum: %s", out)
		assert.Equal(t, map[string]map[string]int64{"replicas": {"cluster1": 3, "cluster2": 3, "cluster3": 3}}, f.plan("web"))
		describe := f.Kubectl("-n", "e2e", "describe", "deployment", "web")
		assert.Contains(t, describe, "ReplicasPlanned")
		assert.Contains(t, describe, "Replica plan: cluster1=3 cluster2=3 cluster3=3 (was: none)")
	})

	t.Run("weights, minimums and maximums", func(t *testing.T) {
		f := f.in(t)
		f.Apply(deployment("weights", 6, prefs(`{"clusters":{"cluster2":{"weight":1},"cluster3":{"weight":2}}}`)))
		f.Apply(deployment("minimums", 8, prefs(`{"clusters":{"cluster1":{"weight":100},"cluster2":{"minReplicas":3},"cluster3":{"minReplicas":4}}}`)))
		f.Apply(deployment("maximums", 7, prefs(`{"clusters":{"cluster1":{"maxReplicas":1,"weight":1},"*":{"weight":1}}}`)))
		f.waitReplicas("weights", map[string]int64{"cluster1": 0, "cluster2": 2, "cluster3": 4})
		f.waitReplicas("minimums", map[string]int64{"cluster1": 1, "cluster2": 3, "cluster3": 4})
		f.waitReplicas("maximums", map[string]int64{"cluster1": 1, "cluster2": 3, "cluster3": 3})
	})

	t.Run("a ReplicaSet is divided by its own annotation", func(t *testing.T) {
		f := f.in(t)
		manifest := strings.NewReplacer("kind: Deployment", "kind: ReplicaSet", "deployment-preferences", "replica-set-preferences").
			Replace(deployment("rs", 6, prefs(`{"clusters":{"cluster2":{"weight":1},"cluster3":{"weight":2}}}`)))
		f.Apply(manifest)
		f.waitCounts(converge, replicaSets, "rs", "replicas", three, "0/2/4", func(got map[string]int64) bool {
			return got["cluster1"] <= 0 && got["cluster2"] == 2 && got["cluster3"] == 4
		})
		f.waitFed("replicaset", "rs", "{.status.readyReplicas}", "6")
	})

	t.Run("all weights zero: an event and a condition", func(t *testing.T) {
		f := f.in(t)
		f.Apply(deployment("nowhere", 2, prefs(`{"clusters":{"*":{"weight":0}}}`)))
		f.waitFed("deployment", "nowhere", `{.status.conditions[?(@.type=="ReplicasPlaced")].status}`, "False")
		describe := f.Kubectl("-n", "e2e", "describe", "deployment", "nowhere")
		assert.Contains(t, describe, "ReplicasUnplaced")
		assert.Contains(t, describe, "2 replicas fit no cluster")
	})

	t.Run("an invalid preferences annotation is refused with a 422 naming it", func(t *testing.T) {
		f := f.in(t)
		_, err := f.User.Kubectl().RunWithInput(context.Background(), deployment("bad", 1, prefs(`{"clusters":{"*":{"weight":-1}}}`)),
			"--context=fed", "apply", "-f", "-")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "federation.kubernetes.io/deployment-preferences")
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: f.User.Kubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: "fed"}).ClientConfig()
		require.NoError(t, err)
		fed, err := dynamic.NewForConfig(cfg)
		require.NoError(t, err)
		obj := map[string]any{}
		require.NoError(t, yaml.Unmarshal([]byte(deployment("bad", 1, prefs(`{"clusters":{"*":{"weight":-1}}}`))), &obj))
		_, err = fed.Resource(deployments).Namespace("e2e").Create(context.Background(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		var status apierrors.APIStatus
		require.ErrorAs(t, err, &status)
		assert.EqualValues(t, 422, status.Status().Code)
		assert.Contains(t, err.Error(), "federation.kubernetes.io/deployment-preferences")
	})

	t.Run("an image update rolls out in every member; scale re-plans", func(t *testing.T) {
		f := f.in(t)
		f.Kubectl("-n", "e2e", "set", "image", "deployment/web", "app=nginx:1.27")
		f.rolloutStatus("web")
		for _, c := range three {
			out := f.memberKubectl(c, "-n", "e2e", "get", "deployment", "web", "-o",
				"jsonpath={.spec.template.spec.containers[0].image} {.status.updatedReplicas} {.status.readyReplicas}")
			assert.Equal(t, "nginx:1.27 3 3", out, "cluster %s rolled out", c)
		}
		// Readiness at the federation, as a dashboard watching it sees it
		// during the scale-up: never below the 9 pods that keep running.
		ready := kubectl.Start(t, f.User.Kubectl().Kubeconfig, "--context="+f.Context, "-n", "e2e", "get", "deployment", "web",
			"-w", "-o", `jsonpath={.status.readyReplicas}{"\n"}`)
		require.NoError(t, ready.WaitFor(context.Background(), "the watch's first line", func(out string) bool { return strings.HasSuffix(out, "\n") }))
		f.Kubectl("-n", "e2e", "scale", "deployment/web", "--replicas=12")
		f.waitReplicas("web", map[string]int64{"cluster1": 4, "cluster2": 4, "cluster3": 4})
		f.rolloutStatus("web")
		f.waitFed("deployment", "web", "{.status.readyReplicas}", "12")
		require.NoError(t, ready.WaitFor(context.Background(), "12 ready in the watch", func(out string) bool { return strings.HasSuffix(out, "12\n") }))
		seen := strings.Fields(ready.Stdout())
		for _, n := range seen {
			v, err := strconv.Atoi(n)
			require.NoError(t, err, "%q", seen)
			assert.GreaterOrEqual(t, v, 9, "ready replicas at the federation during the scale-up: %v", seen)
		}
		t.Logf("ready replicas at the federation during the scale-up: %v", seen)
	})

	t.Run("HPA: min/max divided where the target runs, and members own the target's replicas", func(t *testing.T) {
		f := f.in(t)
		f.Apply(`apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: e2e}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 3
  maxReplicas: 9
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
`)
		for _, field := range []string{"minReplicas", "maxReplicas"} {
			want := map[string]int64{"minReplicas": 1, "maxReplicas": 3}[field]
			f.waitCounts(converge, hpas, "web", field, three, fmt.Sprintf("%s %d each", field, want), func(got map[string]int64) bool {
				return got["cluster1"] == want && got["cluster2"] == want && got["cluster3"] == want
			})
		}
		f.waitFed("deployment", "web", `{.metadata.annotations.federation\.kubernetes\.io/hpa-target-cluster-list}`,
			`{"Names":["cluster1","cluster2","cluster3"]}`)
		// Each member's HPA brings its 4 replicas down to its maximum, 3,
		// and the federation follows instead of restoring its plan: its
		// spec.replicas becomes what the HPAs run, as an HPA scales its
		// target in one cluster, so that rollout status agrees.
		f.waitReplicas("web", map[string]int64{"cluster1": 3, "cluster2": 3, "cluster3": 3})
		f.waitFed("deployment", "web", "{.spec.replicas} {.status.readyReplicas}", "9 9")
		f.rolloutStatus("web")
		// The members' HPAs may act one after the other: 12, 11, 10, 9.
		require.NoError(t, poll.Until(context.Background(), converge, "a ScaledByHPA event for 9 replicas", func(ctx context.Context) error {
			out, err := f.User.Kubectl().Run(ctx, "--context=fed", "-n", "e2e", "get", "events",
				"--field-selector=involvedObject.kind=Deployment,involvedObject.name=web,reason=ScaledByHPA", "-o", "jsonpath={.items[*].message}")
			if err != nil || !strings.Contains(out, "Replicas 9 (was ") || !strings.Contains(out, "what the clusters' HPAs run (cluster1=3 cluster2=3 cluster3=3)") {
				return fmt.Errorf("events %q %v", out, err)
			}
			return nil
		}))

		// A count chosen in a member stays, also when the federation next writes there.
		f.memberKubectl("cluster1", "-n", "e2e", "scale", "deployment/web", "--replicas=2")
		f.Kubectl("-n", "e2e", "annotate", "deployment", "web", "e2e.test/step=hpa")
		require.NoError(t, poll.Until(context.Background(), converge, "the annotation in cluster1", func(ctx context.Context) error {
			out, err := f.User.Kubectl().Run(ctx, "--context=cluster1", "-n", "e2e", "get", "deployment", "web", "-o",
				`jsonpath={.metadata.annotations.e2e\.test/step} {.spec.replicas}`)
			if err != nil || out != "hpa 2" {
				return fmt.Errorf("annotation and replicas %q %v", out, err)
			}
			return nil
		}))

		f.waitFed("deployment", "web", "{.spec.replicas}", "8")

		// Without the HPA the federation divides the count the HPAs left,
		// as a Deployment keeps its replicas when its HPA goes.
		f.Kubectl("-n", "e2e", "delete", "hpa", "web")
		f.waitFed("deployment", "web", `{.metadata.annotations.federation\.kubernetes\.io/hpa-target-cluster-list}`, "")
		f.waitCounts(converge, deployments, "web", "replicas", three, "8 replicas in all, by the plan", func(got map[string]int64) bool {
			planned := f.plan("web")["replicas"]
			for _, c := range three {
				if got[c] != planned[c] {
					return false
				}
			}
			return sum(got, three...) == 8
		})
		f.rolloutStatus("web")
		f.waitFed("deployment", "web", "{.spec.replicas} {.status.readyReplicas}", "8 8")
	})

	t.Run("Job: completions and parallelism divided, Complete when every part is", func(t *testing.T) {
		f := f.in(t)
		f.Apply(`apiVersion: batch/v1
kind: Job
metadata: {name: batch, namespace: e2e}
spec:
  completions: 6
  parallelism: 3
  template:
    spec:
      restartPolicy: Never
      containers: [{name: work, image: busybox}]
`)
		f.waitCounts(converge, jobs, "batch", "completions", three, "2 completions each", func(got map[string]int64) bool {
			return got["cluster1"] == 2 && got["cluster2"] == 2 && got["cluster3"] == 2
		})
		f.waitFed("job", "batch", `{.status.succeeded} {.status.conditions[?(@.type=="Complete")].status}`, "6 True")
		k := f.User.Kubectl()
		_, err := k.Run(context.Background(), "--context=fed", "-n", "e2e", "wait", "--for=condition=Complete", "job/batch", "--timeout=30s")
		require.NoError(t, err)
	})

	t.Run("an Indexed Job is not divided: it runs whole in one cluster, and its status comes back", func(t *testing.T) {
		f := f.in(t)
		// With the successPolicy, a member given part of the completions
		// would refuse its copy (succeededIndexes beyond its completions).
		f.Apply(`apiVersion: batch/v1
kind: Job
metadata: {name: indexed, namespace: e2e}
spec:
  completionMode: Indexed
  completions: 6
  parallelism: 3
  successPolicy:
    rules: [{succeededIndexes: "0-5"}]
  template:
    spec:
      restartPolicy: Never
      containers: [{name: work, image: busybox}]
`)
		got := f.waitCounts(converge, jobs, "indexed", "completions", three, "6 completions in one cluster, none elsewhere", func(got map[string]int64) bool {
			var whole, none int
			for _, n := range got {
				switch n {
				case 6:
					whole++
				case -1:
					none++
				}
			}
			return whole == 1 && none == len(three)-1
		})
		var holder string
		for c, n := range got {
			if n == 6 {
				holder = c
			}
		}
		parallelism := f.waitCounts(converge, jobs, "indexed", "parallelism", []string{holder}, "parallelism 3", func(got map[string]int64) bool { return got[holder] == 3 })
		assert.Equal(t, int64(3), parallelism[holder])
		f.waitFed("job", "indexed", `{.status.succeeded} {.status.completedIndexes} {.status.conditions[?(@.type=="Complete")].status}`, "6 0-5 True")
		member := f.memberKubectl(holder, "-n", "e2e", "get", "job", "indexed", "-o", `jsonpath={.status.succeeded} {.status.completedIndexes} {.status.failed}`)
		fed := f.Kubectl("-n", "e2e", "get", "job", "indexed", "-o", `jsonpath={.status.succeeded} {.status.completedIndexes} {.status.failed}`)
		assert.Equal(t, member, fed, "the federation's status is %s's", holder)
		var plan map[string]map[string]int64
		out := f.Kubectl("-n", "e2e", "get", "job", "indexed", "-o", `jsonpath={.metadata.annotations.federation\.kubernetes\.io/replica-plan}`)
		require.NoError(t, json.Unmarshal([]byte(out), &plan), "plan annotation %q", out)
		assert.Equal(t, map[string]map[string]int64{"completions": {holder: 6}, "parallelism": {holder: 3}}, plan)
		events := f.Kubectl("-n", "e2e", "get", "events", "--field-selector=involvedObject.kind=Job,involvedObject.name=indexed",
			"-o", `jsonpath={range .items[*]}{.reason}: {.message}{"\n"}{end}`)
		assert.Contains(t, events, "IndexedJobNotDivided: Job e2e/indexed is an Indexed Job: not divided, it runs whole in cluster "+holder)
		for _, c := range three {
			if c == holder {
				continue
			}
			_, err := f.Member(c).Resource(jobs).Namespace("e2e").Get(context.Background(), "indexed", metav1.GetOptions{})
			assert.True(t, apierrors.IsNotFound(err), "no copy in %s: %v", c, err)
		}
	})

	t.Run("a Job a member already runs is adopted when asked; its pod template, which cannot change, stays without the federation's label", func(t *testing.T) {
		f := f.in(t)
		job := `apiVersion: batch/v1
kind: Job
metadata: {name: adopted, namespace: e2e, annotations: {%s}}
spec:
  completions: %d
  parallelism: %d
  template:
    spec:
      restartPolicy: Never
      containers: [{name: work, image: busybox}]
`
		_, err := f.User.Kubectl().RunWithInput(context.Background(), fmt.Sprintf(job, "", 1, 1), "--context=cluster1", "apply", "-f", "-")
		require.NoError(t, err)
		// 3 divided over 3: cluster1's share is what it already runs. The
		// member's own Job is taken over only because the federated one
		// asks for it.
		f.Apply(fmt.Sprintf(job, "federation.kubernetes.io/conflict-resolution: adopt", 3, 3))
		f.waitFed("job", "adopted", `{.status.succeeded} {.status.conditions[?(@.type=="Complete")].status}`, "3 True")
		podLabel := func(cluster string) (string, bool) {
			obj, err := f.Member(cluster).Resource(jobs).Namespace("e2e").Get(context.Background(), "adopted", metav1.GetOptions{})
			require.NoError(t, err)
			require.Equal(t, "fed", obj.GetLabels()["federation.kubernetes.io/federation-name"], "the federation holds the Job in %s", cluster)
			v, found, _ := unstructured.NestedString(obj.Object, "spec", "template", "metadata", "labels", "federation.kubernetes.io/federation-name")
			return v, found
		}
		_, labelled := podLabel("cluster1")
		assert.False(t, labelled, "the adopted Job's pod template is as it was")
		v, labelled := podLabel("cluster2")
		assert.True(t, labelled && v == "fed", "a Job the federation created labels its pods")
		events := f.Kubectl("-n", "e2e", "get", "events", "--field-selector=involvedObject.kind=Job,involvedObject.name=adopted",
			"-o", `jsonpath={range .items[*]}{.reason}: {.message}{"\n"}{end}`)
		assert.Contains(t, events, "AdoptInCluster")
		assert.NotContains(t, events, "Failed", "no write was refused")
	})

	t.Run("unschedulable pods move the surplus to other clusters", func(t *testing.T) {
		f := f.in(t)
		f.Apply(deployment("spill", 6, ""))
		f.waitReplicas("spill", map[string]int64{"cluster1": 2, "cluster2": 2, "cluster3": 2})
		f.rolloutStatus("spill")
		nodes := strings.Fields(f.memberKubectl("cluster2", "get", "nodes", "-o", "name"))
		require.NotEmpty(t, nodes)
		for _, n := range nodes {
			f.memberKubectl("cluster2", "cordon", n)
		}
		t.Cleanup(func() {
			for _, n := range nodes {
				_, _ = f.User.Kubectl().Run(context.Background(), "--context=cluster2", "uncordon", n)
			}
		})
		scaled := time.Now()
		f.Kubectl("-n", "e2e", "scale", "deployment/spill", "--replicas=12")
		// The even plan asks cluster2 for 4; its 2 new pods stay Pending.
		got := f.waitCounts(converge+window, deployments, "spill", "replicas", three, "cluster2 back to what it runs, the rest elsewhere", func(got map[string]int64) bool {
			return got["cluster2"] == 2 && got["cluster1"]+got["cluster3"] == 10
		})
		t.Logf("surplus moved %s after the scale: %v", time.Since(scaled), got)
		describe := f.Kubectl("-n", "e2e", "describe", "deployment", "spill")
		assert.Contains(t, describe, "cluster2=4", "the plan before the window")
		assert.GreaterOrEqual(t, time.Since(scaled), window, "not before the window")
		f.rolloutStatus("spill")
		f.waitFed("deployment", "spill", "{.status.readyReplicas}", "12")
	})

	t.Run("failover: a stopped cluster's replicas move, and come back only with rebalance", func(t *testing.T) {
		f := f.in(t)
		f.Apply(deployment("back", 9, prefs(`{"rebalance":true,"clusters":{"*":{"weight":1}}}`)))
		f.Apply(deployment("stay", 9, ""))
		f.waitReplicas("back", map[string]int64{"cluster1": 3, "cluster2": 3, "cluster3": 3})
		f.waitReplicas("stay", map[string]int64{"cluster1": 3, "cluster2": 3, "cluster3": 3})

		stopped := time.Now()
		require.NoError(t, env.StopAPIServer("cluster3"))
		u.WaitClusterStatus("fed", time.Minute, map[string]string{"cluster3": "Offline"})
		detected := time.Now()
		two := []string{"cluster1", "cluster2"}
		for _, name := range []string{"back", "stay"} {
			f.waitCounts(15*time.Second+time.Since(detected), deployments, name, "replicas", two, "9 replicas in cluster1 and cluster2", func(got map[string]int64) bool {
				return sum(got, two...) == 9
			})
		}
		t.Logf("Offline %s after the stop; replicas moved %s after that", detected.Sub(stopped), time.Since(detected))
		assert.NotContains(t, f.plan("stay")["replicas"], "cluster3", "the plan covers Ready clusters")

		require.NoError(t, env.StartAPIServer(context.Background(), "cluster3"))
		u.WaitClusterStatus("fed", time.Minute, map[string]string{"cluster3": "Ready"})
		f.waitReplicas("back", map[string]int64{"cluster1": 3, "cluster2": 3, "cluster3": 3})
		stay := f.waitCounts(converge, deployments, "stay", "replicas", three, "cluster3's copy kept at 0, 9 in cluster1 and cluster2", func(got map[string]int64) bool {
			return got["cluster3"] == 0 && sum(got, two...) == 9
		})
		t.Logf("with rebalance false: %v", stay)
		require.NoError(t, poll.Until(context.Background(), converge, "the federation's status of stay", func(ctx context.Context) error {
			out, err := f.User.Kubectl().Run(ctx, "--context=fed", "-n", "e2e", "get", "deployment", "stay", "-o", "jsonpath={.status.readyReplicas}")
			if err != nil || out != "9" {
				return fmt.Errorf("readyReplicas %q %v", out, err)
			}
			return nil
		}))
	})
	t.Run("the federated objects' status was always accepted", func(t *testing.T) {
		log, err := os.ReadFile(f.cmLog)
		require.NoError(t, err)
		for _, line := range strings.Split(string(log), "\n") {
			if strings.Contains(line, "the object has been modified") {
				continue // a conflict, retried
			}
			assert.NotContains(t, line, "writing status of", "a status the apiserver refused")
			assert.NotContains(t, line, "writing the replica plan of")
		}
	})
	t.Logf("the whole test took %s", time.Since(start))
}
