package workloads_test

import (
	"bufio"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

const (
	revisionAnnotation = "deployment.kubernetes.io/revision"
	rollbackAnnotation = "deprecated.deployment.rollback.to"
	localLabel         = "federation.kubernetes.io/local"
)

// TestRollout drives a federated Deployment's revision history with the
// real kubectl: rollout history, undo, status, and the extensions/v1beta1
// rollback subresource, against three real members.
func TestRollout(t *testing.T) {
	if testing.Short() {
		t.Skip("starts member clusters")
	}
	start := time.Now()
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(3, 1))
	u.InitFederation("fed")
	u.JoinAll("fed", three...)
	f := newFixture(t, u, env)
	f.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: e2e}\n")
	t.Logf("setting up took %s", time.Since(start))

	t.Run("rollout history lists every revision with its change cause", func(t *testing.T) {
		f := f.in(t)
		f.Apply(rolloutDeployment("nginx:1.25", "create"))
		f.rolloutStatus("roll")
		f.Apply(rolloutDeployment("nginx:1.26", "image 1.26"))
		f.rolloutStatus("roll")
		f.Kubectl("-n", "e2e", "set", "image", "deployment/roll", "app=nginx:1.27")
		f.Kubectl("-n", "e2e", "annotate", "--overwrite", "deployment/roll", "kubernetes.io/change-cause=image 1.27")
		f.rolloutStatus("roll")
		f.waitHistory(map[int]string{1: "create", 2: "image 1.26", 3: "image 1.27"})
		f.waitFed("deployment", "roll", `{.metadata.annotations.deployment\.kubernetes\.io/revision}`, "3")

		out := f.Kubectl("-n", "e2e", "rollout", "history", "deployment/roll", "--revision=2")
		assert.Contains(t, out, "revision #2", out)
		assert.Regexp(t, `Image:\s+nginx:1\.26`, out)
		assert.Contains(t, out, "pod-template-hash=", out)
		assert.Contains(t, out, "image 1.26", out)
		f.membersHaveImage("roll", "nginx:1.27")
		f.checkHistoryStaysHome("roll")
	})

	t.Run("rollout undo goes back to the previous revision, in every member", func(t *testing.T) {
		f := f.in(t)
		out := f.Kubectl("-n", "e2e", "rollout", "undo", "deployment/roll")
		assert.Contains(t, out, "rolled back", out)
		f.membersHaveImage("roll", "nginx:1.26")
		f.rolloutStatus("roll")
		// Revision 2 came back as 4, as on a cluster.
		f.waitHistory(map[int]string{1: "create", 3: "image 1.27", 4: "image 1.26"})

		f.Kubectl("-n", "e2e", "rollout", "undo", "deployment/roll", "--to-revision=1")
		f.membersHaveImage("roll", "nginx:1.25")
		out = f.rolloutStatus("roll")
		assert.Contains(t, out, "successfully rolled out", out)
		f.waitHistory(map[int]string{3: "image 1.27", 4: "image 1.26", 5: "create"})
		f.waitCurrentReplicaSetReady("roll", 3)
		f.checkHistoryStaysHome("roll")
	})

	t.Run("the v1beta1 rollback subresource rolls back once, and member copies settle", func(t *testing.T) {
		f := f.in(t)
		f.waitFed("deployment", "roll", `{.metadata.annotations.deployment\.kubernetes\.io/revision}`, "5")
		before := f.memberGenerations("roll")
		writesBefore := f.deploymentWrites()
		seen := f.watchMemberAnnotations("roll", rollbackAnnotation)

		body := `{"kind":"DeploymentRollback","apiVersion":"extensions/v1beta1","name":"roll","rollbackTo":{"revision":3}}`
		_, err := f.User.Kubectl().RunWithInput(context.Background(), body, "--context=fed", "create", "--raw",
			"/apis/extensions/v1beta1/namespaces/e2e/deployments/roll/rollback", "-f", "-")
		require.NoError(t, err)
		f.membersHaveImage("roll", "nginx:1.27")
		f.rolloutStatus("roll")
		f.waitHistory(map[int]string{4: "image 1.26", 5: "create", 6: "image 1.27"})
		f.waitFed("deployment", "roll", `{.metadata.annotations.deprecated\.deployment\.rollback\.to}`, "")
		assert.Contains(t, f.Kubectl("-n", "e2e", "describe", "deployment", "roll"), `Rolled back deployment "roll" to revision 3`)

		// The copies settle: their generation stays put over a window.
		var after map[string]int64
		stable, last := 0, map[string]int64(nil)
		require.NoError(t, poll.UntilEvery(context.Background(), 2*time.Minute, time.Second, "member generations of deployment roll to stay put for 10 readings, a second apart", func(ctx context.Context) error {
			after = f.memberGenerations("roll")
			if fmt.Sprint(after) == fmt.Sprint(last) {
				stable++
			} else {
				stable, last = 0, after
			}
			if stable < 10 {
				return fmt.Errorf("generations %v, the same for %d readings", after, stable)
			}
			return nil
		}))
		writes := f.deploymentWrites()
		for _, c := range three {
			t.Logf("%s: member generation %d -> %d, member writes of the deployments controller %v -> %v", c, before[c], after[c], writesBefore[c], writes[c])
			// One write of the new template; the member's own controller then
			// writes its revision annotation (an annotation bumps a
			// Deployment's generation).
			assert.LessOrEqual(t, after[c]-before[c], int64(2), "cluster %s: generation of the copy", c)
			assert.LessOrEqual(t, writes[c]-writesBefore[c], 2.0, "cluster %s: federation writes of deployments", c)
		}
		assert.Empty(t, seen(), "the rollback annotation never reached a member")
		f.checkHistoryStaysHome("roll")
	})

	t.Run("a rollback to an unknown revision is given up with an event", func(t *testing.T) {
		f := f.in(t)
		body := `{"kind":"DeploymentRollback","apiVersion":"extensions/v1beta1","name":"roll","rollbackTo":{"revision":42}}`
		_, err := f.User.Kubectl().RunWithInput(context.Background(), body, "--context=fed", "create", "--raw",
			"/apis/extensions/v1beta1/namespaces/e2e/deployments/roll/rollback", "-f", "-")
		require.NoError(t, err)
		require.NoError(t, poll.Until(context.Background(), converge, "a DeploymentRollbackRevisionNotFound event on deployment roll", func(ctx context.Context) error {
			out, err := f.User.Kubectl().Run(ctx, "--context=fed", "-n", "e2e", "get", "events", "--field-selector=involvedObject.name=roll,reason=DeploymentRollbackRevisionNotFound", "-o", "name")
			if err != nil || strings.TrimSpace(out) == "" {
				return fmt.Errorf("none yet: %q %v", out, err)
			}
			return nil
		}))
		f.waitFed("deployment", "roll", `{.metadata.annotations.deprecated\.deployment\.rollback\.to}`, "")
		f.membersHaveImage("roll", "nginx:1.27")
	})

	t.Run("deleting the Deployment deletes its history", func(t *testing.T) {
		f := f.in(t)
		f.Kubectl("-n", "e2e", "delete", "deployment", "roll")
		require.NoError(t, poll.Until(context.Background(), converge, "no ReplicaSet of deployment roll at the federation", func(ctx context.Context) error {
			out, err := f.User.Kubectl().Run(ctx, "--context=fed", "-n", "e2e", "get", "replicasets", "-l", "app=roll", "-o", "name")
			if err != nil || strings.TrimSpace(out) != "" {
				return fmt.Errorf("still: %q %v", out, err)
			}
			return nil
		}))
	})
}

// rolloutDeployment is the Deployment roll with an image and change cause.
func rolloutDeployment(image, cause string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: roll
  namespace: e2e
  annotations: {kubernetes.io/change-cause: %q}
spec:
  replicas: 3
  selector: {matchLabels: {app: roll}}
  template:
    metadata: {labels: {app: roll}}
    spec:
      containers: [{name: app, image: %q}]
`, cause, image)
}

var historyLine = regexp.MustCompile(`^(\d+)\s+(.*)$`)

// waitHistory waits until kubectl rollout history at the federation lists
// exactly want (revision → change cause).
func (f *fixture) waitHistory(want map[int]string) {
	f.T.Helper()
	require.NoError(f.T, poll.Until(context.Background(), converge, fmt.Sprintf("rollout history of deployment roll: %v", want), func(ctx context.Context) error {
		out, err := f.User.Kubectl().Run(ctx, "--context=fed", "-n", "e2e", "rollout", "history", "deployment/roll")
		if err != nil {
			return err
		}
		got := map[int]string{}
		sc := bufio.NewScanner(strings.NewReader(out))
		for sc.Scan() {
			if m := historyLine.FindStringSubmatch(strings.TrimSpace(sc.Text())); m != nil {
				n, _ := strconv.Atoi(m[1])
				got[n] = strings.TrimSpace(m[2])
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("it lists %v:\n%s", got, out)
		}
		return nil
	}))
}

// membersHaveImage waits until every member's copy runs image.
func (f *fixture) membersHaveImage(name, image string) {
	f.T.Helper()
	require.NoError(f.T, poll.Until(context.Background(), converge, fmt.Sprintf("deployment %s with image %s in %v", name, image, three), func(ctx context.Context) error {
		for _, c := range three {
			obj, err := f.Member(c).Resource(deployments).Namespace("e2e").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("%s: %w", c, err)
			}
			containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			if len(containers) == 0 || containers[0].(map[string]any)["image"] != image {
				return fmt.Errorf("%s runs %v", c, containers)
			}
		}
		return nil
	}))
}

// waitCurrentReplicaSetReady waits until the federation's ReplicaSet of the
// Deployment's current revision reports ready replicas (its status comes
// from the members' counts).
func (f *fixture) waitCurrentReplicaSetReady(name string, ready int64) {
	f.T.Helper()
	ctx := context.Background()
	fed := f.fedDynamic()
	require.NoError(f.T, poll.Until(ctx, converge, fmt.Sprintf("the current ReplicaSet of deployment %s with %d ready, the old ones with 0", name, ready), func(ctx context.Context) error {
		d, err := fed.Resource(deployments).Namespace("e2e").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		rss, err := fed.Resource(replicaSets).Namespace("e2e").List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil {
			return err
		}
		for _, rs := range rss.Items {
			got, _, _ := unstructured.NestedInt64(rs.Object, "status", "readyReplicas")
			want := int64(0)
			if rs.GetAnnotations()[revisionAnnotation] == d.GetAnnotations()[revisionAnnotation] {
				want = ready
			}
			if got != want {
				return fmt.Errorf("replicaset %s (revision %s) has %d ready", rs.GetName(), rs.GetAnnotations()[revisionAnnotation], got)
			}
		}
		return nil
	}))
}

// checkHistoryStaysHome checks that the federation's history ReplicaSets
// are local and owned by the Deployment, and that no member holds one of
// them: members have only their own ReplicaSets, which carry none of our
// marks.
func (f *fixture) checkHistoryStaysHome(name string) {
	f.T.Helper()
	ctx := context.Background()
	fed, err := f.fedDynamic().Resource(replicaSets).Namespace("e2e").List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	require.NoError(f.T, err)
	require.NotEmpty(f.T, fed.Items)
	for _, rs := range fed.Items {
		assert.Equal(f.T, "true", rs.GetLabels()[localLabel], "replicaset %s", rs.GetName())
		refs := rs.GetOwnerReferences()
		if assert.Len(f.T, refs, 1, "replicaset %s", rs.GetName()) {
			assert.Equal(f.T, "Deployment", refs[0].Kind)
			assert.Equal(f.T, name, refs[0].Name)
		}
		for _, c := range three {
			_, err := f.Member(c).Resource(replicaSets).Namespace("e2e").Get(ctx, rs.GetName(), metav1.GetOptions{})
			assert.Error(f.T, err, "replicaset %s of the federation is in %s", rs.GetName(), c)
		}
	}
	for _, c := range three {
		d, err := f.Member(c).Resource(deployments).Namespace("e2e").Get(ctx, name, metav1.GetOptions{})
		require.NoError(f.T, err)
		members, err := f.Member(c).Resource(replicaSets).Namespace("e2e").List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		require.NoError(f.T, err)
		require.NotEmpty(f.T, members.Items, "%s runs its own ReplicaSets", c)
		// The member's deployment controller copies the Deployment's
		// annotations and pod labels (ours among them) to its ReplicaSets:
		// who wrote them and who owns them tells them apart.
		for _, rs := range members.Items {
			assert.NotContains(f.T, rs.GetLabels(), localLabel, "%s: replicaset %s", c, rs.GetName())
			assert.NotContains(f.T, rs.GetLabels(), "federation.kubernetes.io/federation-uid", "%s: replicaset %s is a copy", c, rs.GetName())
			for _, m := range rs.GetManagedFields() {
				assert.NotEqual(f.T, "federation-controller-manager", m.Manager, "%s: replicaset %s was written by the federation", c, rs.GetName())
			}
			refs := rs.GetOwnerReferences()
			if assert.Len(f.T, refs, 1, "%s: replicaset %s", c, rs.GetName()) {
				assert.Equal(f.T, d.GetUID(), refs[0].UID, "%s: replicaset %s is the member's Deployment's", c, rs.GetName())
			}
		}
		// What the federation applies to the copy holds neither annotation.
		for _, m := range d.GetManagedFields() {
			if m.Manager == "federation-controller-manager" && m.FieldsV1 != nil {
				assert.NotContains(f.T, string(m.FieldsV1.Raw), revisionAnnotation, "%s: the federation applies the revision", c)
				assert.NotContains(f.T, string(m.FieldsV1.Raw), rollbackAnnotation, "%s: the federation applies the rollback", c)
			}
		}
	}
}

// memberGenerations reads the generation of each member's copy.
func (f *fixture) memberGenerations(name string) map[string]int64 {
	f.T.Helper()
	out := map[string]int64{}
	for _, c := range three {
		obj, err := f.Member(c).Resource(deployments).Namespace("e2e").Get(context.Background(), name, metav1.GetOptions{})
		require.NoError(f.T, err)
		out[c] = obj.GetGeneration()
	}
	return out
}

// deploymentWrites reads federation_sync_member_writes_total of the
// deployments controller per cluster (every verb).
func (f *fixture) deploymentWrites() map[string]float64 {
	f.T.Helper()
	body, err := f.User.ControllerManagerMetrics("fed")
	require.NoError(f.T, err)
	out := map[string]float64{}
	cluster := regexp.MustCompile(`cluster="([^"]+)"`)
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "federation_sync_member_writes_total{") || !strings.Contains(line, `type="deployments"`) {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		require.NoError(f.T, err, line)
		if m := cluster.FindStringSubmatch(line); m != nil {
			out[m[1]] += v
		}
	}
	return out
}

// watchMemberAnnotations watches the member copies of a Deployment until
// the test ends, and returns a function listing the versions of them that
// carried the annotation.
func (f *fixture) watchMemberAnnotations(name, annotation string) func() []string {
	f.T.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu   sync.Mutex
		seen []string
		wg   sync.WaitGroup
	)
	for _, c := range three {
		w, err := f.Member(c).Resource(deployments).Namespace("e2e").Watch(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
		require.NoError(f.T, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ev := range w.ResultChan() {
				obj, ok := ev.Object.(*unstructured.Unstructured)
				if !ok || ev.Type == watch.Error {
					continue
				}
				if v, ok := obj.GetAnnotations()[annotation]; ok {
					mu.Lock()
					seen = append(seen, fmt.Sprintf("%s: generation %d with %s=%s", c, obj.GetGeneration(), annotation, v))
					mu.Unlock()
				}
			}
		}()
	}
	f.T.Cleanup(func() { cancel(); wg.Wait() })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// fedDynamic is a dynamic client of the federation, as the user.
func (f *fixture) fedDynamic() dynamic.Interface {
	f.T.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: f.User.Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: "fed"}).ClientConfig()
	require.NoError(f.T, err)
	c, err := dynamic.NewForConfig(cfg)
	require.NoError(f.T, err)
	return c
}
