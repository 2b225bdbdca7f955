package sync_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/federation-v1/federation/pkg/localprocess"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

var (
	secrets     = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// TestSynchronousDeletion checks that a deleted federated object is gone
// from the next read, as in a cluster, and that its member copies still go,
// from the tombstone its deletion left in federation-system: also when the
// controller manager was down at the time.
func TestSynchronousDeletion(t *testing.T) {
	if testing.Short() {
		t.Skip("starts member clusters")
	}
	two := []string{"cluster1", "cluster2"}
	u := fedenv.NewUser(t, binDir)
	env := fedenv.WithMembers(t, u, memberenv.DefaultClusters(2, 1))
	u.InitFederation("fed")
	u.JoinAll("fed", two...)
	f := newFixture(t, u, env)
	f.Apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: del}\n")
	f.WaitIn(two, namespaces, "", "del", labelled)

	t.Run("kubectl delete: gone from the next get, copies gone", func(t *testing.T) {
		f := f.in(t)
		f.Apply(configMap("del", "x", "", "k: v"))
		f.WaitIn(two, configMaps, "del", "x", labelled)
		start := time.Now()
		f.Kubectl("delete", "configmap", "x", "-n", "del")
		f.notFound("configmap", "del", "x")
		t.Logf("kubectl delete, then get NotFound: %s", time.Since(start).Round(time.Millisecond))
		f.WaitAbsent(two, configMaps, "del", "x")
		f.waitNoTombstones()
	})

	t.Run("deleting by label and a deletecollection list nothing right after", func(t *testing.T) {
		f := f.in(t)
		for _, name := range []string{"y1", "y2"} {
			f.Apply(labelledWith(configMap("del", name, "", "k: v"), `app: "y"`))
		}
		f.Apply(labelledWith(federatedTypes[1].manifest("del", "y3"), `app: "y"`))
		f.Apply(labelledWith(federatedTypes[2].manifest("del", "y4"), `app: "y"`))
		f.Apply(labelledWith(configMap("del", "z1", "", "k: v"), `app: "z"`))
		f.Apply(labelledWith(configMap("del", "z2", "", "k: v"), `app: "z"`))
		for _, name := range []string{"y1", "y2", "z1", "z2"} {
			f.WaitIn(two, configMaps, "del", name, labelled)
		}
		f.WaitIn(two, secrets, "del", "y3", labelled)
		f.WaitIn(two, services, "del", "y4", labelled)

		f.Kubectl("delete", "configmaps,secrets,services", "-l", "app=y", "-n", "del")
		assert.Empty(t, strings.TrimSpace(f.Kubectl("get", "configmaps,secrets,services", "-l", "app=y", "-n", "del", "-o", "name")))
		// A DELETE of the collection itself (what the API's deletecollection
		// and namespace deletion do).
		f.Kubectl("delete", "--raw", "/api/v1/namespaces/del/configmaps?labelSelector=app%3Dz")
		assert.Empty(t, strings.TrimSpace(f.Kubectl("get", "configmaps", "-l", "app=z", "-n", "del", "-o", "name")))

		for _, name := range []string{"y1", "y2", "z1", "z2"} {
			f.WaitAbsent(two, configMaps, "del", name)
		}
		f.WaitAbsent(two, secrets, "del", "y3")
		f.WaitAbsent(two, services, "del", "y4")
		f.waitNoTombstones()
	})

	t.Run("the controller manager down: copies go once it is back", func(t *testing.T) {
		f := f.in(t)
		f.Apply(configMap("del", "while-down", "", "k: v"))
		f.Apply(workload("Deployment", "replicas: 2")("del", "web"))
		f.WaitIn(two, configMaps, "del", "while-down", labelled)
		f.WaitIn(two, deployments, "del", "web", labelled)

		stopControllerManager(t, u, "fed")
		f.Kubectl("delete", "configmap", "while-down", "-n", "del")
		f.Kubectl("delete", "deployment", "web", "-n", "del")
		f.notFound("configmap", "del", "while-down")
		f.notFound("deployment", "del", "web")
		assert.ElementsMatch(t, []string{"configmaps del/while-down", "deployments.apps del/web"}, f.tombstones(),
			"each deletion recorded")
		for _, c := range two {
			for _, obj := range []struct {
				gvr  schema.GroupVersionResource
				name string
			}{{configMaps, "while-down"}, {deployments, "web"}} {
				copy, err := f.MemberObject(context.Background(), c, obj.gvr, "del", obj.name)
				require.NoError(t, err)
				require.NotNil(t, copy, "%s %s is still in %s while nothing deletes it", obj.gvr.Resource, obj.name, c)
			}
		}

		u.RestartControllerManager("fed")
		f.WaitAbsent(two, configMaps, "del", "while-down")
		f.WaitAbsent(two, deployments, "del", "web")
		f.waitNoTombstones()
	})

	t.Run("orphan keeps the copies, foreground deletes them first", func(t *testing.T) {
		f := f.in(t)
		f.Apply(configMap("del", "kept", "", "k: v"))
		f.Apply(configMap("del", "fg", "", "k: v"))
		f.WaitIn(two, configMaps, "del", "kept", labelled)
		f.WaitIn(two, configMaps, "del", "fg", labelled)
		f.Kubectl("delete", "configmap", "kept", "-n", "del", "--cascade=orphan", "--wait=false")
		f.Kubectl("delete", "configmap", "fg", "-n", "del", "--cascade=foreground", "--wait=false")
		f.waitGoneAtFederation("configmap", "del", "kept")
		f.waitGoneAtFederation("configmap", "del", "fg")
		f.WaitIn(two, configMaps, "del", "kept", notLabelled)
		f.WaitAbsent(two, configMaps, "del", "fg")
		assert.Empty(t, f.tombstones(), "neither needs a tombstone: the object waited for its copies")
	})

	t.Run("deleted and created again at once: the new object keeps its copies", func(t *testing.T) {
		f := f.in(t)
		f.Apply(configMap("del", "again", "", "k: old"))
		f.WaitIn(two, configMaps, "del", "again", labelled)
		f.Kubectl("delete", "configmap", "again", "-n", "del")
		f.Kubectl("create", "configmap", "again", "-n", "del", "--from-literal=k=new")
		f.waitNoTombstones()
		f.WaitIn(two, configMaps, "del", "again", func(o *unstructured.Unstructured) error {
			if err := labelled(o); err != nil {
				return err
			}
			if got, _, _ := unstructured.NestedString(o.Object, "data", "k"); got != "new" {
				return fmt.Errorf("data.k is %q, want the new object's", got)
			}
			return nil
		})
		// And they stay: nothing of the old object's deletion is left to run.
		f.atRest(10 * time.Second)
		f.WaitIn(two, configMaps, "del", "again", labelled)
	})
}

// labelledWith adds a labels line to a manifest's metadata.
func labelledWith(manifest, labels string) string {
	for _, marker := range []string{"metadata:\n", "metadata: {"} {
		if i := strings.Index(manifest, marker); i >= 0 {
			if marker == "metadata:\n" {
				return manifest[:i+len(marker)] + "  labels: {" + labels + "}\n" + manifest[i+len(marker):]
			}
			return manifest[:i+len(marker)] + "labels: {" + labels + "}, " + manifest[i+len(marker):]
		}
	}
	panic("no metadata in " + manifest)
}

// notFound checks that kubectl finds no such object at the federation, at
// once.
func (f *fixture) notFound(resource, ns, name string) {
	f.T.Helper()
	_, err := f.User.Kubectl().Run(context.Background(), "--context=fed", "get", resource, name, "-n", ns)
	require.Error(f.T, err, "%s %s/%s is gone from the next get", resource, ns, name)
	assert.Contains(f.T, err.Error(), "NotFound")
}

// tombstones lists the tombstones in federation-system as "resource.group
// namespace/name".
func (f *fixture) tombstones() []string {
	f.T.Helper()
	out := f.Kubectl("get", "configmaps", "-n", "federation-system", "-l", "federation.kubernetes.io/tombstone",
		"-o", `jsonpath={range .items[*]}{.metadata.labels.federation\.kubernetes\.io/tombstone}{" "}{.data.namespace}/{.data.name}{"\n"}{end}`)
	var list []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line != "" {
			list = append(list, line)
		}
	}
	return list
}

// waitNoTombstones waits until the controller manager has deleted every
// tombstone: every deleted object's copies are let go.
func (f *fixture) waitNoTombstones() {
	f.T.Helper()
	require.NoError(f.T, poll.Until(context.Background(), converge, "no tombstone left in federation-system", func(context.Context) error {
		if left := f.tombstones(); len(left) > 0 {
			return fmt.Errorf("left: %v", left)
		}
		return nil
	}))
}

// stopControllerManager stops the local federation's controller manager.
func stopControllerManager(t *testing.T, u *fedenv.User, name string) {
	t.Helper()
	stopped := 0
	for _, p := range localprocess.FindMentioning(u.PlaneDir(name), map[string]bool{processplane.ControllerManager: true}) {
		require.NoError(t, p.Stop(5*time.Second))
		stopped++
	}
	require.Equal(t, 1, stopped, "one controller manager was running")
}
