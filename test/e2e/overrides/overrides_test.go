package overrides_test

import (
	"context"
	"errors"
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

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

const (
	annotation = "federation.kubernetes.io/overrides"
	base       = "registry.k8s.io/pause:3.10"
)

// rules: cluster3 is the one in eu; cluster1 gets its own tag; a label
// for cluster1 and cluster3, which the later rule changes for cluster3.
const rules = `[
  {"clusterSelector":[{"key":"region","operator":"in","values":["eu"]}],"image":{"registry":"eu.registry.example"},"env":[{"name":"REGION","value":"eu"}]},
  {"clusters":["cluster1"],"image":{"tag":"3.9"}},
  {"clusters":["cluster1","cluster3"],"labels":{"tier":"gold"}},
  {"clusters":["cluster3"],"patches":[{"op":"replace","path":"/metadata/labels/tier","value":"platinum"}]}]`

func deployment(rules string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: e2e
  annotations:
    %s: '%s'
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: c
        image: %s
`, annotation, strings.ReplaceAll(rules, "\n", ""), base)
}

// copyIs checks a member's copy: its container's image, env and args, and
// its tier label ("" for none).
func copyIs(image, env, args, tier string) func(*unstructured.Unstructured) error {
	return func(o *unstructured.Unstructured) error {
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		if len(containers) != 1 {
			return fmt.Errorf("%d containers", len(containers))
		}
		c := containers[0].(map[string]any)
		var gotEnv []string
		envs, _ := c["env"].([]any)
		for _, e := range envs {
			m := e.(map[string]any)
			gotEnv = append(gotEnv, fmt.Sprintf("%v=%v", m["name"], m["value"]))
		}
		var gotArgs []string
		list, _ := c["args"].([]any)
		for _, a := range list {
			gotArgs = append(gotArgs, fmt.Sprint(a))
		}
		got := fmt.Sprintf("image %v env %q args %q tier %q", c["image"], strings.Join(gotEnv, ","), strings.Join(gotArgs, " "), o.GetLabels()["tier"])
		if want := fmt.Sprintf("image %v env %q args %q tier %q", image, env, args, tier); got != want {
			return fmt.Errorf("%s, want %s", got, want)
		}
		return nil
	}
}

func TestOverrides(t *testing.T) {
	if testing.Short() {
		t.Skip("starts member clusters")
	}
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(3, 1))
	u.InitFederation("fed")
	three := []string{"cluster1", "cluster2", "cluster3"}
	u.JoinAll("fed", three...)
	f := &fixture{fedenv.NewFixture(t, u, env.Clients(func(cfg *rest.Config) { cfg.QPS, cfg.Burst = 50, 100 }), "fed", converge)}
	for c, region := range map[string]string{"cluster1": "us", "cluster2": "us", "cluster3": "eu"} {
		f.Kubectl("label", "cluster", c, "region="+region, "--overwrite")
	}
	require.NoError(t, f.TryApply("apiVersion: v1\nkind: Namespace\nmetadata: {name: e2e}\n"))
	// kubectl apply records the rules in its last-applied annotation,
	// which travels without them.
	f.Apply(deployment(rules))

	t.Run("by name, by selector, in order, image shorthand", func(t *testing.T) {
		f := f.in(t)
		f.waitCopies("e2e", "web", map[string]func(*unstructured.Unstructured) error{
			"cluster1": copyIs("registry.k8s.io/pause:3.9", "", "", "gold"),
			"cluster2": copyIs(base, "", "", ""),
			"cluster3": copyIs("eu.registry.example/pause:3.10", "REGION=eu", "", "platinum"),
		})
		var total int64
		for _, c := range three {
			obj, err := f.Member(c).Resource(deployments).Namespace("e2e").Get(context.Background(), "web", metav1.GetOptions{})
			require.NoError(t, err)
			n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
			total += n
		}
		assert.EqualValues(t, 3, total, "replicas stay planned across the clusters")
		assert.Contains(t, f.Kubectl("get", "deploy", "web", "-n", "e2e", "-o", "yaml"), annotation, "kubectl shows the rules")
		f.WaitEvents("web", "OverridesApplied", "rule 0 in cluster cluster3; rule 1 in cluster cluster1; rule 2 in clusters cluster1, cluster3; rule 3 in cluster cluster3")
	})

	t.Run("no member writes when nothing changes", func(t *testing.T) {
		f := f.in(t)
		f.quiet(10 * time.Second)
	})

	t.Run("drift is repaired to the cluster's own version", func(t *testing.T) {
		f := f.in(t)
		patch := `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"registry.k8s.io/pause:by-hand"}]}}}}`
		edited, err := f.Member("cluster1").Resource(deployments).Namespace("e2e").Patch(context.Background(), "web",
			types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "someone"})
		require.NoError(t, err)
		require.NoError(t, copyIs("registry.k8s.io/pause:by-hand", "", "", "gold")(edited), "edited by hand")
		f.waitCopies("e2e", "web", map[string]func(*unstructured.Unstructured) error{
			"cluster1": copyIs("registry.k8s.io/pause:3.9", "", "", "gold"),
		})
		f.WaitEvents("web", "Restored Deployment e2e/web in cluster cluster1: it was changed there")
	})

	t.Run("a rule changed for one cluster by kubectl apply rewrites only that cluster", func(t *testing.T) {
		f := f.in(t)
		before := f.settled()
		withArgs := strings.TrimSuffix(rules, "]") + `,{"clusters":["cluster2"],"container":"c","args":["--v=2"]}]`
		f.Apply(deployment(withArgs))
		f.waitCopies("e2e", "web", map[string]func(*unstructured.Unstructured) error{"cluster2": copyIs(base, "", "--v=2", "")})
		after := f.settled()
		assert.Greater(t, after["cluster2"], before["cluster2"])
		assert.Equal(t, before["cluster1"], after["cluster1"], "cluster1's copy is unchanged")
		assert.Equal(t, before["cluster3"], after["cluster3"], "cluster3's copy is unchanged")
	})

	t.Run("a Cluster's labels changing re-evaluates", func(t *testing.T) {
		f := f.in(t)
		f.Kubectl("label", "cluster", "cluster2", "region=eu", "--overwrite")
		f.waitCopies("e2e", "web", map[string]func(*unstructured.Unstructured) error{
			"cluster2": copyIs("eu.registry.example/pause:3.10", "REGION=eu", "--v=2", ""),
		})
	})

	t.Run("a bad rule is refused with a 422 naming it", func(t *testing.T) {
		f := f.in(t)
		bad := `[{"labels":{"a":"b"}},{"patches":[{"op":"replace","path":"/metadata/name","value":"x"}]}]`
		err := f.TryApply(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n  namespace: e2e\n  annotations: {%s: '%s'}\ndata: {k: v}\n", annotation, bad))
		require.Error(t, err)
		assert.Contains(t, err.Error(), `is invalid: metadata.annotations[federation.kubernetes.io/overrides][1].patches[0].path: Forbidden: /metadata/name`)

		_, err = u.Kubectl().Run(context.Background(), "--context=fed", "annotate", "deploy", "web", "-n", "e2e", "--overwrite",
			annotation+`=[{"patches":[{"op":"remove","path":"/spec/template/spec/containers/5"}]}]`)
		require.Error(t, err, "a patch that does not apply to the object")
		assert.Contains(t, err.Error(), `metadata.annotations[federation.kubernetes.io/overrides][0].patches[0].path: Invalid value: "/spec/template/spec/containers/5"`)

		_, err = u.Kubectl().Run(context.Background(), "--context=fed", "annotate", "deploy", "web", "-n", "e2e", "--overwrite",
			annotation+`=[{"patches":[{"op":"replace","path":"/spec/replicas","value":9}]}]`)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "spec.replicas is planned by the replica preferences")
	})

	t.Run("without the annotation every copy returns to the base", func(t *testing.T) {
		f := f.in(t)
		f.Kubectl("annotate", "deploy", "web", "-n", "e2e", annotation+"-")
		checks := map[string]func(*unstructured.Unstructured) error{}
		for _, c := range three {
			checks[c] = copyIs(base, "", "", "")
		}
		f.waitCopies("e2e", "web", checks)
		f.WaitEvents("web", "No overrides apply to Deployment e2e/web any more")
	})
}

// quiet checks that no Deployment is written to any member for window,
// once writes have stopped.
func (f *fixture) quiet(window time.Duration) {
	f.T.Helper()
	last := f.settled()
	err := poll.Until(context.Background(), window, "the end of the quiet window", func(context.Context) error {
		if now := f.writes(); !equal(now, last) {
			return poll.Abort(fmt.Errorf("member writes at rest: %v, then %v", last, now))
		}
		return errors.New("quiet")
	})
	require.ErrorContains(f.T, err, "timed out", "the window must end quietly")
	f.T.Logf("no member writes in %s at rest (%v)", window, last)
}
