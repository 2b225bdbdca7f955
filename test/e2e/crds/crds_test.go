package crds_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"k8s.io/client-go/rest"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"

	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

const clusterStatusAnnotation = "federation.kubernetes.io/cluster-status"

func TestCustomResources(t *testing.T) {
	if testing.Short() {
		t.Skip("starts member clusters")
	}
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(3, 1))
	u.InitFederation("fed")
	three := []string{"cluster1", "cluster2", "cluster3"}
	clients := env.Clients(func(cfg *rest.Config) { cfg.QPS, cfg.Burst = 50, 100 })
	f := &fixture{Fixture: fedenv.NewFixture(t, u, clients, "fed", converge), fed: federationClient(t, u, "fed")}

	// cluster3 has a CRD of its own of a name the federation will use.
	_, err := u.Kubectl().RunWithInput(context.Background(), ownGadgetCRD, "--context=cluster3", "apply", "-f", "-")
	require.NoError(t, err)

	want := map[string]string{}
	for _, c := range three {
		u.MustKubefed("join", c, "--context=fed", "--custom-resource-groups=certs.example.com")
		want[c] = "Ready"
	}
	u.WaitClusterStatus("fed", 2*time.Minute, want)
	for _, c := range []string{"cluster1", "cluster2"} {
		f.Kubectl("label", "cluster", c, "certs=yes")
	}
	f.Apply(certificateCRD)
	f.Apply(widgetCRD)
	f.Kubectl("wait", "--for=condition=Established", "crd/certificates.certs.example.com", "crd/widgets.certs.example.com", "--timeout=30s")
	f.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: e2e}\n")

	t.Run("served at the federation", func(t *testing.T) {
		f := f.in(t)
		assert.Contains(t, f.Kubectl("api-resources", "--api-group=certs.example.com"), "certificates")
		assert.Contains(t, f.Kubectl("explain", "certificates.spec.secretName"), "The Secret the certificate is written to.")
	})

	t.Run("CRDs are Established in every member", func(t *testing.T) {
		f := f.in(t)
		f.WaitIn(three, crds, "", "certificates.certs.example.com", established)
		f.WaitIn(three, crds, "", "widgets.certs.example.com", established)
	})

	f.Apply(certificate("web", `[{"key":"certs","operator":"in","values":["yes"]}]`))

	t.Run("a custom resource goes to the selected members", func(t *testing.T) {
		f := f.in(t)
		f.WaitIn([]string{"cluster1", "cluster2"}, certificates, "e2e", "web", func(o *unstructured.Unstructured) error {
			if name, _, _ := unstructured.NestedString(o.Object, "spec", "secretName"); name != "web-tls" {
				return fmt.Errorf("spec.secretName %q", name)
			}
			return nil
		})
		obj, err := f.MemberObject(context.Background(), "cluster3", certificates, "e2e", "web")
		require.NoError(t, err)
		assert.Nil(t, obj, "cluster3 is not selected")
	})

	t.Run("status comes back per cluster and aggregated", func(t *testing.T) {
		f := f.in(t)
		f.setStatus("cluster1", certificates, "web", readyStatus("True"))
		f.setStatus("cluster2", certificates, "web", readyStatus("False"))
		// A member with no status yet is "not ready" too: the annotation is
		// waited for with both clusters' statuses in it.
		f.waitFederated(certificates, "web", func(obj *unstructured.Unstructured) error {
			if err := readyIs("False", "not ready in cluster2")(obj); err != nil {
				return err
			}
			byCluster := map[string]map[string]any{}
			if err := json.Unmarshal([]byte(obj.GetAnnotations()[clusterStatusAnnotation]), &byCluster); err != nil {
				return fmt.Errorf("annotation %s: %w", clusterStatusAnnotation, err)
			}
			if got := keys(byCluster); !assert.ObjectsAreEqual([]string{"cluster1", "cluster2"}, sorted(got)) {
				return fmt.Errorf("annotation %s holds the statuses of %v", clusterStatusAnnotation, got)
			}
			return nil
		})

		f.setStatus("cluster2", certificates, "web", readyStatus("True"))
		f.waitFederated(certificates, "web", readyIs("True", ""))
		assert.Regexp(t, `web\s+True`, f.Kubectl("get", "certificates", "-n", "e2e"), "kubectl's printer column reads the aggregated condition")
	})

	t.Run("an aggregation rule sums readyReplicas", func(t *testing.T) {
		f := f.in(t)
		f.Apply(widget("w"))
		f.WaitIn(three, widgets, "e2e", "w", nil)
		for i, c := range three {
			f.setStatus(c, widgets, "w", map[string]any{"readyReplicas": int64(i + 1)})
		}
		f.waitFederated(widgets, "w", func(o *unstructured.Unstructured) error {
			if n, _, _ := unstructured.NestedInt64(o.Object, "status", "readyReplicas"); n != 6 {
				return fmt.Errorf("status.readyReplicas %d, want 6", n)
			}
			return nil
		})
	})

	t.Run("drift is repaired", func(t *testing.T) {
		f := f.in(t)
		_, err := f.Member("cluster1").Resource(certificates).Namespace("e2e").Patch(context.Background(), "web", types.MergePatchType,
			[]byte(`{"spec":{"secretName":"by-hand"}}`), metav1.PatchOptions{FieldManager: "someone"})
		require.NoError(t, err)
		f.WaitIn([]string{"cluster1"}, certificates, "e2e", "web", func(o *unstructured.Unstructured) error {
			if name, _, _ := unstructured.NestedString(o.Object, "spec", "secretName"); name != "web-tls" {
				return fmt.Errorf("spec.secretName %q", name)
			}
			return nil
		})
	})

	t.Run("kubefed strays lists and cleans a custom resource's stray copy", func(t *testing.T) {
		f := f.in(t)
		ctx := context.Background()
		web, err := f.Member("cluster1").Resource(certificates).Namespace("e2e").Get(ctx, "web", metav1.GetOptions{})
		require.NoError(t, err)
		// A copy of ours whose federated object is gone (after a restore
		// of an older backup, say): our labels, no object at the federation.
		stray := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "certs.example.com/v1", "kind": "Certificate",
			"spec": map[string]any{"secretName": "stray-tls"}}}
		stray.SetNamespace("e2e")
		stray.SetName("stray")
		stray.SetLabels(web.GetLabels())
		_, err = f.Member("cluster1").Resource(certificates).Namespace("e2e").Create(ctx, stray, metav1.CreateOptions{})
		require.NoError(t, err)

		out := f.User.MustKubefed("strays", "--context=fed")
		assert.Regexp(t, `cluster1\s+Certificate\s+e2e\s+stray\s`, out)
		assert.NotContains(t, out, "web", "web's copies have their federated object")
		out = f.User.MustKubefed("strays", "--context=fed", "--clean")
		assert.Contains(t, out, "deleted Certificate e2e/stray in cluster cluster1")
		_, err = f.Member("cluster1").Resource(certificates).Namespace("e2e").Get(ctx, "stray", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "the stray is gone: %v", err)
		_, err = f.Member("cluster1").Resource(certificates).Namespace("e2e").Get(ctx, "web", metav1.GetOptions{})
		assert.NoError(t, err, "web's copy stays")
	})

	t.Run("a custom resource deleted at the federation goes at once, then from every member", func(t *testing.T) {
		f := f.in(t)
		events := f.watchNamed(certificates, "web")
		f.Kubectl("delete", "certificate", "web", "-n", "e2e", "--timeout=60s")
		assert.Equal(t, []watch.EventType{watch.Added, watch.Deleted}, events(),
			"a watch at the federation sees the delete as a cluster's does")
		f.WaitAbsent(three, certificates, "e2e", "web")
	})

	t.Run("a collection's delete leaves no copy behind", func(t *testing.T) {
		f := f.in(t)
		for _, name := range []string{"batch-1", "batch-2"} {
			f.Apply(labelled(certificate(name, `[{"key":"certs","operator":"in","values":["yes"]}]`), "batch=yes"))
		}
		for _, name := range []string{"batch-1", "batch-2"} {
			f.WaitIn([]string{"cluster1", "cluster2"}, certificates, "e2e", name, nil)
		}
		require.NoError(t, f.fed.Resource(certificates).Namespace("e2e").DeleteCollection(context.Background(),
			metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "batch=yes"}))
		for _, name := range []string{"batch-1", "batch-2"} {
			f.WaitAbsent(three, certificates, "e2e", name)
		}
	})

	t.Run("an orphan delete keeps the copies, no longer the federation's", func(t *testing.T) {
		f := f.in(t)
		f.Apply(certificate("kept", `[{"key":"certs","operator":"in","values":["yes"]}]`))
		f.WaitIn([]string{"cluster1", "cluster2"}, certificates, "e2e", "kept", nil)
		f.Kubectl("delete", "certificate", "kept", "-n", "e2e", "--cascade=orphan", "--timeout=60s")
		f.WaitIn([]string{"cluster1", "cluster2"}, certificates, "e2e", "kept", notOurs)
	})

	t.Run("a member's own CRD of the same name is left alone, the federation's copies of its resources go", func(t *testing.T) {
		f := f.in(t)
		f.Apply(gadgetCRD("v1"))
		f.WaitIn([]string{"cluster1", "cluster2"}, crds, "", "gadgets.certs.example.com", established)
		f.WaitEvents("gadgets.certs.example.com", "ConflictInCluster")
		own, err := f.MemberObject(context.Background(), "cluster3", crds, "", "gadgets.certs.example.com")
		require.NoError(t, err)
		require.NotNil(t, own)
		assert.Empty(t, own.GetLabels(), "not labelled as the federation's")
		versions, _, _ := unstructured.NestedSlice(own.Object, "spec", "versions")
		assert.Equal(t, "own", versions[0].(map[string]any)["name"])

		// cluster3's CRD serves the federation's version too: the
		// federation's gadget is copied there, beside cluster3's own.
		_, err = f.User.Kubectl().RunWithInput(context.Background(), gadget("members-own"), "--context=cluster3", "apply", "-f", "-")
		require.NoError(t, err)
		f.Kubectl("wait", "--for=condition=Established", "crd/gadgets.certs.example.com", "--timeout=30s")
		f.Apply(gadget("federated"))
		f.WaitIn(three, gadgets, "", "federated", nil)

		// Deleting the CRD at the federation takes its gadgets with it,
		// without tombstones: the copy in cluster3, where the CRD is not
		// the federation's to delete, goes all the same, and the CRD's
		// deletion waited for it. cluster3's own CRD and gadget stay.
		f.Kubectl("delete", "crd", "gadgets.certs.example.com", "--timeout=60s")
		f.WaitAbsent([]string{"cluster1", "cluster2"}, crds, "", "gadgets.certs.example.com")
		copied, err := f.MemberObject(context.Background(), "cluster3", gadgets, "", "federated")
		require.NoError(t, err)
		assert.Nil(t, copied, "the federation's copy in cluster3 went with the federation's CRD")
		own, err = f.MemberObject(context.Background(), "cluster3", crds, "", "gadgets.certs.example.com")
		require.NoError(t, err)
		assert.NotNil(t, own, "cluster3's own CRD stays")
		theirs, err := f.MemberObject(context.Background(), "cluster3", gadgets, "", "members-own")
		require.NoError(t, err)
		assert.NotNil(t, theirs, "cluster3's own gadget stays")
	})

	t.Run("a group no member was joined for: told once per cluster, deletions do not wait, the member watch backs off", func(t *testing.T) {
		f := f.in(t)
		f.Apply(gizmoCRD)
		f.Kubectl("wait", "--for=condition=Established", "crd/gizmos.other.example.com", "--timeout=30s")
		f.Apply(gizmo("g"))
		// Its copies are refused in every member: told once per cluster,
		// with the group and the fix.
		f.waitNotGranted("g", three)

		// Over 10 s, the member watches of the group, failing with
		// forbidden, log a few lines, not one per retry within seconds.
		log := filepath.Join(u.PlaneDir("fed"), "logs", processplane.ControllerManager+".log")
		before := forbiddenLines(t, log, "other.example.com")
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(time.Second) {
			require.LessOrEqual(t, forbiddenLines(t, log, "other.example.com")-before, 6,
				"forbidden member watch failures of other.example.com logged within 10 s, in %s", log)
		}
		// Meanwhile the refused copies were tried again (doubling from 1 s):
		// once something else reached the members, still one event per
		// cluster, never counted again, and no failed-write events.
		f.Apply(widget("after-gizmo"))
		f.WaitIn(three, widgets, "e2e", "after-gizmo", nil)
		byCluster, messages, err := f.notGranted(context.Background(), "g")
		require.NoError(t, err)
		for _, c := range three {
			assert.Equal(t, []int64{1}, byCluster[c], "one %s event of gizmo g for %s, counted once: %q", notGrantedEvent, c, messages)
		}
		for _, m := range messages {
			assert.Regexp(t, `kubefed join cluster\d --refresh --add-custom-resource-groups=other\.example\.com`+"`", m)
		}
		assert.NotContains(t, f.Kubectl("get", "events", "-n", "e2e", "--field-selector=involvedObject.name=g"), "InClusterFailed",
			"the refusals are not told at every retry")
		// The Propagated condition says the same, not the members' 403.
		require.NoError(t, poll.Until(context.Background(), converge, "gizmo g's Propagated condition naming every cluster", func(ctx context.Context) error {
			out, err := f.User.Kubectl().Run(ctx, "--context=fed", "get", "gizmo", "g", "-n", "e2e",
				`-o=jsonpath={.status.conditions[?(@.type=="Propagated")].status} {.status.conditions[?(@.type=="Propagated")].message}`)
			if err != nil {
				return err
			}
			if !strings.HasPrefix(out, "False ") {
				return fmt.Errorf("Propagated: %q", out)
			}
			for _, c := range three {
				if want := "kubefed join " + c + " --refresh --add-custom-resource-groups=other.example.com"; !strings.Contains(out, want) {
					return fmt.Errorf("no %q in %q", want, out)
				}
			}
			if strings.Contains(out, "cannot create") || strings.Contains(out, "cannot get") {
				return fmt.Errorf("the member's 403 in %q", out)
			}
			return nil
		}))

		for _, what := range [][]string{{"gizmo", "g", "-n", "e2e"}, {"crd", "gizmos.other.example.com"}} {
			start := time.Now()
			f.Kubectl(append([]string{"delete", "--timeout=30s"}, what...)...)
			require.NoError(t, poll.Until(context.Background(), 10*time.Second, "the federated "+what[0]+" gone", func(ctx context.Context) error {
				_, err := f.User.Kubectl().Run(ctx, append([]string{"--context=fed", "get"}, what...)...)
				if err == nil {
					return fmt.Errorf("still there")
				}
				return nil
			}))
			assert.Less(t, time.Since(start), 15*time.Second, "deleting %v waits for no member", what)
		}
	})

	t.Run("a refused group granted by kubefed join --refresh: the copy follows", func(t *testing.T) {
		f := f.in(t)
		f.Apply(gizmoCRD)
		f.Kubectl("wait", "--for=condition=Established", "crd/gizmos.other.example.com", "--timeout=30s")
		f.Apply(gizmo("h"))
		f.waitNotGranted("h", three)
		// As the event says: the group added to those cluster3 has.
		u.MustKubefed("join", "cluster3", "--context=fed", "--refresh", "--add-custom-resource-groups=other.example.com")
		// The refused writes of the CRD and of h are tried again doubling
		// from 1 s: the next within about as long as they have been refused.
		f.WaitInWithin(2*converge, []string{"cluster3"}, gizmos, "e2e", "h", nil)
		byCluster, messages, err := f.notGranted(context.Background(), "h")
		require.NoError(t, err)
		for _, c := range three {
			assert.Len(t, byCluster[c], 1, "one %s event of gizmo h for %s: %q", notGrantedEvent, c, messages)
		}

		f.Kubectl("delete", "gizmo", "h", "-n", "e2e", "--timeout=60s")
		f.WaitAbsent([]string{"cluster3"}, gizmos, "e2e", "h")
		f.Kubectl("delete", "crd", "gizmos.other.example.com", "--timeout=60s")
		f.WaitAbsent([]string{"cluster3"}, crds, "", "gizmos.other.example.com")
	})

	t.Run("--controllers turns one custom resource's propagation off", func(t *testing.T) {
		f := f.in(t)
		u.RestartControllerManager("fed", "--controllers=*,-widgets.certs.example.com")
		f.Apply(widget("disabled"))
		// What still runs shows the restarted manager at work.
		f.Apply(certificate("kept-on", `[{"key":"certs","operator":"in","values":["yes"]}]`))
		f.WaitIn([]string{"cluster1", "cluster2"}, certificates, "e2e", "kept-on", nil)
		for _, c := range three {
			obj, err := f.MemberObject(context.Background(), c, widgets, "e2e", "disabled")
			require.NoError(t, err)
			assert.Nil(t, obj, "no widget propagated to %s", c)
		}
	})

	t.Run("the federated CRD deleted goes from the members", func(t *testing.T) {
		f := f.in(t)
		f.Kubectl("delete", "crd", "certificates.certs.example.com", "--timeout=90s")
		f.WaitAbsent(three, crds, "", "certificates.certs.example.com")
	})

	t.Run("the member informers of 20 CRDs are released when they are deleted", func(t *testing.T) {
		f.in(t).checkInformersReleased(three)
	})
}

// readyIs checks the federated object's Ready condition.
func readyIs(status, message string) func(*unstructured.Unstructured) error {
	return func(o *unstructured.Unstructured) error {
		conditions, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
		for _, c := range conditions {
			m := c.(map[string]any)
			if m["type"] != "Ready" {
				continue
			}
			if m["status"] != status || (message != "" && m["message"] != message) {
				return fmt.Errorf("Ready %v: %v", m["status"], m["message"])
			}
			return nil
		}
		return fmt.Errorf("no Ready condition in %v", conditions)
	}
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
