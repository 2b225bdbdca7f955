package types_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

func TestTypes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts member clusters")
	}
	start := time.Now()
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(3, 1))
	u.InitFederation("fed")
	u.JoinAll("fed", three...)
	f := &fixture{fedenv.NewFixture(t, u, env.Clients(func(cfg *rest.Config) { cfg.QPS, cfg.Burst = 50, 100 }), "fed", converge)}
	for c, tier := range map[string]string{"cluster1": "gold", "cluster2": "gold", "cluster3": "silver"} {
		f.Kubectl("label", "cluster", c, "tier="+tier, "--overwrite")
	}
	f.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: e2e}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: policies}\n")
	// The members' own default ServiceAccount, which their controllers make
	// in every namespace.
	f.WaitIn(three, serviceAccounts, "e2e", "default", nil)
	t.Logf("setting up took %s", time.Since(start))

	t.Run("types", func(t *testing.T) {
		t.Run("ServiceAccount", func(t *testing.T) {
			t.Parallel()
			serviceAccountSteps(f.in(t))
		})
		t.Run("StatefulSet and PodDisruptionBudget", func(t *testing.T) {
			t.Parallel()
			statefulSetSteps(f.in(t))
		})
		t.Run("CronJob", func(t *testing.T) {
			t.Parallel()
			cronJobSteps(f.in(t))
		})
		t.Run("NetworkPolicy", func(t *testing.T) {
			t.Parallel()
			networkPolicySteps(f.in(t))
		})
		t.Run("PersistentVolumeClaim", func(t *testing.T) {
			t.Parallel()
			claimSteps(f.in(t))
		})
		t.Run("LimitRange and ResourceQuota", func(t *testing.T) {
			t.Parallel()
			quotaSteps(f.in(t))
		})
	})
	t.Logf("the whole test took %s", time.Since(start))
}

// pullSecrets checks a ServiceAccount's imagePullSecrets.
func pullSecrets(want string) func(*unstructured.Unstructured) error {
	return func(obj *unstructured.Unstructured) error {
		secrets, _, _ := unstructured.NestedSlice(obj.Object, "imagePullSecrets")
		var names []string
		for _, s := range secrets {
			names = append(names, fmt.Sprint(s.(map[string]any)["name"]))
		}
		if got := strings.Join(names, ","); got != want {
			return fmt.Errorf("imagePullSecrets %q, want %q", got, want)
		}
		return nil
	}
}

func all(checks ...func(*unstructured.Unstructured) error) func(*unstructured.Unstructured) error {
	return func(obj *unstructured.Unstructured) error {
		for _, c := range checks {
			if err := c(obj); err != nil {
				return err
			}
		}
		return nil
	}
}

func serviceAccountSteps(f *fixture) {
	t := f.T
	f.Apply(`apiVersion: v1
kind: ServiceAccount
metadata:
  name: builder
  namespace: e2e
  annotations:
    ` + goldOnly + `
imagePullSecrets: [{name: registry}]
`)
	f.placed(serviceAccounts, "e2e", "builder", gold)
	f.WaitIn(gold, serviceAccounts, "e2e", "builder", pullSecrets("registry"))
	f.repaired("cluster2", serviceAccounts, "e2e", "builder", `{"imagePullSecrets":[{"name":"other"}]}`, pullSecrets("registry"))

	// What the member adds is its own: it stays through our next write.
	_, err := f.Member("cluster1").Resource(serviceAccounts).Namespace("e2e").Patch(context.Background(), "builder", types.MergePatchType,
		[]byte(`{"secrets":[{"name":"member-token"}]}`), metav1.PatchOptions{})
	require.NoError(t, err)
	f.Kubectl("-n", "e2e", "annotate", "serviceaccount", "builder", "touched=yes")
	f.WaitIn([]string{"cluster1"}, serviceAccounts, "e2e", "builder", all(is("yes", "metadata", "annotations", "touched"), pullSecrets("registry"),
		func(obj *unstructured.Unstructured) error {
			if !strings.Contains(field(obj, "secrets"), "member-token") {
				return fmt.Errorf("the member's secret is gone: %s", field(obj, "secrets"))
			}
			return nil
		}))
	f.deleted("serviceaccount", serviceAccounts, "e2e", "builder")

	// The federated default configures every member's own default, which
	// it adopts without a conflict, and gives back when deleted.
	f.Apply("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default, namespace: e2e}\nimagePullSecrets: [{name: registry}]\n")
	f.WaitIn(three, serviceAccounts, "e2e", "default", all(pullSecrets("registry"), is("true", "metadata", "annotations", "federation.kubernetes.io/adopted")))
	events := f.Kubectl("-n", "e2e", "get", "events", "--field-selector=involvedObject.kind=ServiceAccount,involvedObject.name=default")
	assert.NotContains(t, events, "ConflictInCluster")
	f.Kubectl("-n", "e2e", "delete", "serviceaccount", "default")
	f.WaitIn(three, serviceAccounts, "e2e", "default", func(obj *unstructured.Unstructured) error {
		if obj.GetDeletionTimestamp() != nil || obj.GetLabels()[federationv1beta1.FederationLabel] != "" {
			return fmt.Errorf("not given back: labels %v, deleting %v", obj.GetLabels(), obj.GetDeletionTimestamp())
		}
		return nil
	})
}

func statefulSetSteps(f *fixture) {
	t := f.T
	// A tenant's bad preferences are refused at admission (422 naming the
	// annotation), never stored to be divided by.
	err := f.TryApply(`apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: bad
  namespace: e2e
  annotations:
    federation.kubernetes.io/stateful-set-preferences: '{"clusters":{"*":{"weight":-1}}}'
spec:
  replicas: 1
  serviceName: bad
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: bad}}
    spec: {containers: [{name: c, image: registry.k8s.io/pause:3.10}]}
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `is invalid: metadata.annotations[federation.kubernetes.io/stateful-set-preferences]`)
	out, err := f.User.Kubectl().Run(context.Background(), "--context=fed", "-n", "e2e", "get", "statefulset", "bad", "--ignore-not-found", "-o", "name")
	require.NoError(t, err)
	assert.Empty(t, strings.TrimSpace(out), "nothing stored")
	f.Apply(`apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: e2e
  annotations:
    federation.kubernetes.io/stateful-set-preferences: '{"clusters":{"cluster1":{"weight":2},"cluster2":{"weight":1},"cluster3":{"weight":1}}}'
spec:
  replicas: 4
  serviceName: db
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: registry.k8s.io/pause:3.10}]
`)
	counts := func(c1, c2, c3 string) {
		t.Helper()
		for c, n := range map[string]string{"cluster1": c1, "cluster2": c2, "cluster3": c3} {
			f.WaitIn([]string{c}, statefulSets, "e2e", "db", is(n, "spec", "replicas"))
		}
	}
	counts("2", "1", "1")
	rollout(f, "statefulset/db")
	assert.Equal(t, "4/4", strings.Fields(f.Kubectl("-n", "e2e", "get", "statefulset", "db", "--no-headers"))[1], "READY is the members' sum")

	// Each member enforces the budget on its own pods: 2, 1 and 1 pods
	// with at least 1 available allow one disruption, in cluster1.
	f.Apply(`apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db, namespace: e2e}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: db}}
`)
	f.placed(pdbs, "e2e", "db", three)
	f.waitFed("poddisruptionbudget", "e2e", "db", "{.status.expectedPods} {.status.currentHealthy} {.status.desiredHealthy} {.status.disruptionsAllowed}", "4 4 3 1")
	f.waitFed("poddisruptionbudget", "e2e", "db", `{.status.conditions[?(@.type=="DisruptionAllowed")].status}`, "False")
	assert.Equal(t, "1", strings.Fields(f.Kubectl("-n", "e2e", "get", "pdb", "db", "--no-headers"))[3], "ALLOWED DISRUPTIONS")
	f.repaired("cluster1", pdbs, "e2e", "db", `{"spec":{"minAvailable":2}}`, is("1", "spec", "minAvailable"))

	f.repaired("cluster2", statefulSets, "e2e", "db", `{"spec":{"replicas":3}}`, is("1", "spec", "replicas"))
	f.Kubectl("-n", "e2e", "scale", "statefulset", "db", "--replicas=8")
	counts("4", "2", "2")
	rollout(f, "statefulset/db")
	f.waitFed("statefulset", "e2e", "db", "{.status.readyReplicas}", "8")

	f.deleted("poddisruptionbudget", pdbs, "e2e", "db")
	f.deleted("statefulset", statefulSets, "e2e", "db")

	// The members' admission policy refuses a pod template beyond
	// baseline, whatever its kind.
	f.Apply(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: hostnet, namespace: e2e}
spec:
  replicas: 1
  selector: {matchLabels: {app: hostnet}}
  template:
    metadata: {labels: {app: hostnet}}
    spec:
      hostNetwork: true
      containers: [{name: c, image: registry.k8s.io/pause:3.10}]
`)
	f.WaitEvents("hostnet", "CreateInClusterFailed", `federation "fed" may not run pods with hostNetwork`)
	f.deleted("statefulset", statefulSets, "e2e", "hostnet")
}

// rollout runs kubectl rollout status at the federation.
func rollout(f *fixture, what string) {
	f.T.Helper()
	k := f.User.Kubectl()
	k.Timeout = 2 * time.Minute
	out, err := k.Run(context.Background(), "--context=fed", "-n", "e2e", "rollout", "status", what, "--timeout=90s")
	require.NoError(f.T, err, out)
}

func cronJobSteps(f *fixture) {
	f.Kubectl("-n", "e2e", "create", "cronjob", "tick", "--image=registry.k8s.io/pause:3.10", "--schedule=*/1 * * * *")
	f.placed(cronJobs, "e2e", "tick", three)
	f.Kubectl("-n", "e2e", "annotate", "cronjob", "tick",
		`federation.alpha.kubernetes.io/cluster-selector=[{"key":"tier","operator":"==","values":["silver"]}]`)
	f.placed(cronJobs, "e2e", "tick", []string{"cluster3"})
	f.repaired("cluster3", cronJobs, "e2e", "tick", `{"spec":{"schedule":"0 0 1 1 *"}}`, is("*/1 * * * *", "spec", "schedule"))
	// The member's cronjob controller starts a Job at the next minute, and
	// kwok completes its pod at once.
	set := func(s string) bool { return s != "" }
	f.waitFedWithin(90*time.Second, "cronjob", "e2e", "tick", "{.status.lastScheduleTime}", set, "set")
	f.waitFedWithin(converge, "cronjob", "e2e", "tick", "{.status.lastSuccessfulTime}", set, "set")
	f.deleted("cronjob", cronJobs, "e2e", "tick")

	f.Apply(`apiVersion: batch/v1
kind: CronJob
metadata: {name: hostpid, namespace: e2e}
spec:
  schedule: "0 0 1 1 *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          hostPID: true
          containers: [{name: c, image: registry.k8s.io/pause:3.10}]
`)
	f.WaitEvents("hostpid", "CreateInClusterFailed", `federation "fed" may not run pods with hostPID`)
	f.deleted("cronjob", cronJobs, "e2e", "hostpid")
}

func networkPolicySteps(f *fixture) {
	f.Apply(`apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: web-only
  namespace: e2e
  annotations:
    ` + goldOnly + `
spec:
  podSelector: {matchLabels: {app: web}}
  policyTypes: [Ingress]
  ingress: [{from: [{podSelector: {matchLabels: {role: frontend}}}]}]
`)
	f.placed(networkPolicies, "e2e", "web-only", gold)
	f.repaired("cluster1", networkPolicies, "e2e", "web-only", `{"spec":{"podSelector":{"matchLabels":{"app":"other"}}}}`,
		is("web", "spec", "podSelector", "matchLabels", "app"))
	f.deleted("networkpolicy", networkPolicies, "e2e", "web-only")
}

// claim is a PersistentVolumeClaim of 1Gi of class.
func claim(name, class, annotations string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: %s
  namespace: e2e
  labels: {team: storage}
  annotations: {%s}
spec:
  storageClassName: %s
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`, name, annotations, class)
}

func claimSteps(f *fixture) {
	t := f.T
	// Each member has a volume the claim binds to.
	for _, c := range three {
		pv := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "PersistentVolume",
			"metadata": map[string]any{"name": "e2e-data"},
			"spec": map[string]any{"storageClassName": "manual", "accessModes": []any{"ReadWriteOnce"}, "capacity": map[string]any{"storage": "1Gi"},
				"persistentVolumeReclaimPolicy": "Retain", "hostPath": map[string]any{"path": "/tmp/e2e-data"}}}}
		_, err := f.Member(c).Resource(volumes).Create(context.Background(), pv, metav1.CreateOptions{})
		require.NoError(t, err, "a volume in %s", c)
	}
	f.Apply(claim("data", "manual", ""))
	f.placed(claims, "e2e", "data", three)
	f.WaitIn(three, claims, "e2e", "data", all(is("Bound", "status", "phase"), is("e2e-data", "spec", "volumeName")))
	f.waitFed("pvc", "e2e", "data", "{.status.phase} {.status.capacity.storage}", "Bound 1Gi")
	// Bound means no copy was being written: the members' bindings were
	// not taken for changes to repair.
	body, err := f.User.ControllerManagerMetrics("fed")
	require.NoError(t, err)
	writes, err := fedenv.MetricByLabel(body, "federation_sync_member_writes_total", "verb", map[string]string{"type": "persistentvolumeclaims"})
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"create": 3}, writes, "one create per member, nothing written after the binding")
	assert.Empty(t, f.Kubectl("-n", "e2e", "get", "pvc", "data", "-o", "jsonpath={.spec.volumeName}"), "the members' volumes stay theirs")
	f.repaired("cluster2", claims, "e2e", "data", `{"metadata":{"labels":{"team":"other"}}}`, is("storage", "metadata", "labels", "team"))

	// Bound nowhere: Pending.
	f.Apply(claim("scratch", "none", goldOnly))
	f.placed(claims, "e2e", "scratch", gold)
	f.waitFed("pvc", "e2e", "scratch", "{.status.phase}", "Pending")
	f.deleted("pvc", claims, "e2e", "scratch")

	// Orphaned: the data stays in every member, as the member's own.
	f.Kubectl("-n", "e2e", "delete", "pvc", "data", "--cascade=orphan")
	require.NoError(t, poll.Until(context.Background(), converge, "the orphaned claim gone from the federation", func(ctx context.Context) error {
		out, err := f.User.Kubectl().Run(ctx, "--context=fed", "-n", "e2e", "get", "pvc", "-o", "name")
		if err != nil {
			return err
		}
		if strings.Contains(out, "/data") {
			return fmt.Errorf("still there: %s", out)
		}
		return nil
	}))
	f.WaitIn(three, claims, "e2e", "data", func(obj *unstructured.Unstructured) error {
		if obj.GetDeletionTimestamp() != nil || obj.GetLabels()[federationv1beta1.FederationLabel] != "" || field(obj, "status", "phase") != "Bound" {
			return fmt.Errorf("not left bound to the member: labels %v, deleting %v, phase %s", obj.GetLabels(), obj.GetDeletionTimestamp(), field(obj, "status", "phase"))
		}
		return nil
	})
}

func quotaSteps(f *fixture) {
	t := f.T
	f.Apply(`apiVersion: v1
kind: LimitRange
metadata:
  name: defaults
  namespace: policies
  annotations:
    ` + goldOnly + `
spec:
  limits: [{type: Container, defaultRequest: {cpu: 100m}, default: {cpu: 200m}}]
`)
	f.placed(limitRanges, "policies", "defaults", gold)
	defaultCPU := func(obj *unstructured.Unstructured) error {
		limits, _, _ := unstructured.NestedSlice(obj.Object, "spec", "limits")
		if len(limits) != 1 || field(&unstructured.Unstructured{Object: limits[0].(map[string]any)}, "default", "cpu") != "200m" {
			return fmt.Errorf("limits are %v", limits)
		}
		return nil
	}
	f.repaired("cluster1", limitRanges, "policies", "defaults", `{"spec":{"limits":[{"type":"Container","default":{"cpu":"1"}}]}}`, defaultCPU)
	f.deleted("limitrange", limitRanges, "policies", "defaults")

	// The federation counts its own ConfigMaps (settings: it has no
	// kube-root-ca.crt), and refuses one beyond the quota; each member
	// enforces its copy on its own. As in a cluster, a quota counts the
	// objects created once its status is set (before, its count waits for
	// the next resync).
	f.Apply("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: objects, namespace: policies}\nspec:\n  hard: {configmaps: \"10\"}\n")
	f.waitFed("resourcequota", "policies", "objects", "{.status.hard.configmaps}", "10")
	f.Apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: policies}\ndata: {k: v}\n")
	f.placed(quotas, "policies", "objects", three)
	f.waitFed("resourcequota", "policies", "objects", "{.status.hard.configmaps} {.status.used.configmaps}", "10 1")
	assert.Contains(t, f.Kubectl("-n", "policies", "get", "quota", "objects"), "configmaps: 1/10")
	f.Apply("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: one-configmap, namespace: policies}\nspec:\n  hard: {configmaps: \"1\"}\n")
	f.waitFed("resourcequota", "policies", "one-configmap", "{.status.hard.configmaps} {.status.used.configmaps}", "1 1")
	out, err := f.User.Kubectl().Run(context.Background(), "--context=fed", "-n", "policies", "create", "configmap", "second")
	require.Error(t, err, out)
	assert.Contains(t, err.Error()+out, "exceeded quota: one-configmap")
	f.Kubectl("-n", "policies", "delete", "quota", "one-configmap")
	f.repaired("cluster3", quotas, "policies", "objects", `{"spec":{"hard":{"configmaps":"1"}}}`, is("10", "spec", "hard", "configmaps"))
	f.deleted("resourcequota", quotas, "policies", "objects")

	// Pods are counted by each member, which enforces the whole quota on
	// its own: status.used is the fullest member's use (3 of 10, not the
	// sum 4), and each member's own use is in an annotation.
	f.Apply("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: pods, namespace: policies}\nspec:\n  hard: {pods: \"10\"}\n")
	f.placed(quotas, "policies", "pods", three)
	for cluster, n := range map[string]int{"cluster1": 3, "cluster2": 1} {
		for i := range n {
			pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{"name": fmt.Sprintf("counted-%d", i), "namespace": "policies"},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}}
			_, err := f.Member(cluster).Resource(pods).Namespace("policies").Create(context.Background(), pod, metav1.CreateOptions{})
			require.NoError(t, err)
		}
	}
	f.waitFed("resourcequota", "policies", "pods", "{.status.hard.pods} {.status.used.pods}", "10 3")
	usage := f.Kubectl("-n", "policies", "get", "quota", "pods", "-o", `jsonpath={.metadata.annotations.federation\.kubernetes\.io/member-quota-usage}`)
	assert.JSONEq(t, `{"cluster1":{"pods":"3"},"cluster2":{"pods":"1"},"cluster3":{"pods":"0"}}`, usage)
	f.deleted("resourcequota", quotas, "policies", "pods")
}
