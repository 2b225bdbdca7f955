package propagation

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/controllers/propagation/release"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// mustSync runs what the controller's workers run on key, once.
func (tc *testController) mustSync(t *testing.T, key string) {
	t.Helper()
	require.NoError(t, tc.Sync(context.Background(), key))
}

// fedWrites lists the controller's writes to the federation as
// "verb[/subresource]".
func (tc *testController) fedWrites() []string {
	var out []string
	for _, a := range tc.fedClient.Actions() {
		if a.GetVerb() == "get" || a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		w := a.GetVerb()
		if a.GetSubresource() != "" {
			w += "/" + a.GetSubresource()
		}
		out = append(out, w)
	}
	return out
}

func inNamespace(o *unstructured.Unstructured, ns string) *unstructured.Unstructured {
	o.SetNamespace(ns)
	o.SetUID(types.UID("uid-" + o.GetName()))
	return o
}

func TestADeploymentInKubeSystemIsRefused(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	fed := inNamespace(deploymentObj(), "kube-system")
	fed.SetFinalizers(nil)
	tc := newTestController(t, federatedtypes.ByName("deployments"), members, fed)
	tc.mustSync(t, "kube-system/d")

	assert.Empty(t, members.Actions("c1"), "nothing is written to the member")
	assert.Equal(t, []string{"Warning NotPropagated Deployment kube-system/d is not propagated to any member cluster: namespace kube-system is never propagated"}, tc.events())
	assert.Equal(t, []string{"update/status"}, tc.fedWrites(), "no finalizer, only the condition")
	got, err := tc.fedClient.Resource(federatedtypes.ByName("deployments").Resource).Namespace("kube-system").Get(context.Background(), "d", metav1.GetOptions{})
	require.NoError(t, err)
	conditions, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	require.Len(t, conditions, 1)
	c := conditions[0].(map[string]any)
	assert.Equal(t, PropagatedCondition, c["type"])
	assert.Equal(t, "False", c["status"])
	assert.Equal(t, release.ReasonNotPropagated, c["reason"])
	assert.Equal(t, "namespace kube-system is never propagated", c["message"])

	// Again, with the condition in the cache: nothing more is said or written.
	require.NoError(t, tc.indexer.Update(got))
	tc.mustSync(t, "kube-system/d")
	assert.Empty(t, tc.events(), "the event is told once")
	assert.Equal(t, []string{"update/status"}, tc.fedWrites())

	// Sync alone never propagates it either.
	require.NoError(t, tc.sync(t, "kube-system/d"))
	assert.Empty(t, members.Actions("c1"))
}

func TestTheSystemNamespacesAreNeverPropagated(t *testing.T) {
	for _, ns := range []string{"kube-system", "kube-public", "kube-node-lease"} {
		t.Run(ns, func(t *testing.T) {
			members := testmembers.New([]string{"c1"})
			tc := newTestController(t, federatedtypes.ByName("configmaps"), members, inNamespace(configMapObj("a"), ns))
			tc.mustSync(t, ns+"/a")
			assert.Empty(t, members.Actions("c1"))
			assert.Empty(t, tc.fedWrites(), "a type without conditions gets only the event")
			assert.Equal(t, []string{"Warning NotPropagated ConfigMap " + ns + "/a is not propagated to any member cluster: namespace " + ns + " is never propagated"}, tc.events())

			// The federated Namespace of that name is not propagated either.
			nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
			nsObj.SetName(ns)
			tn := newTestController(t, federatedtypes.ByName("namespaces"), members, nsObj)
			tn.mustSync(t, ns)
			assert.Empty(t, members.Actions("c1"), "the member's own %s is never touched", ns)
			assert.Empty(t, tn.fedWrites())
			assert.Len(t, tn.events(), 1)
		})
	}
}

func TestTheFederationsOwnNamespaceIsQuiet(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	svc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"spec": map[string]any{"type": "LoadBalancer"}}}
	svc.SetName("s")
	tc := newTestController(t, federatedtypes.ByName("services"), members, inNamespace(svc, federationv1beta1.SystemNamespace))
	tc.mustSync(t, federationv1beta1.SystemNamespace+"/s")
	assert.Empty(t, members.Actions("c1"))
	assert.Empty(t, tc.fedWrites())
	assert.Empty(t, tc.events(), "the members' credentials are not refused, they are the federation's")
}

func TestTheListOfNeverPropagatedNamespacesIsAnOption(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members,
		inNamespace(configMapObj("a"), "kube-public"), inNamespace(configMapObj("b"), "monitoring"),
		inNamespace(configMapObj("c"), federationv1beta1.SystemNamespace))
	tc.opts.NeverPropagatedNamespaces = []string{"monitoring"}
	tc.r = tc.newReleaser()

	tc.mustSync(t, "monitoring/b")
	tc.mustSync(t, federationv1beta1.SystemNamespace+"/c")
	assert.Empty(t, members.Actions("c1"), "widened to monitoring, and the federation's own is always in")
	assert.Len(t, tc.events(), 1)

	require.NoError(t, tc.sync(t, "kube-public/a"))
	tc.mustSync(t, "kube-public/a")
	assert.Equal(t, []string{"create"}, members.Actions("c1"), "narrowed: kube-public travels")
}

func TestADeletedRefusedObjectIsLetGo(t *testing.T) {
	members := testmembers.New([]string{"c1"})
	fed := inNamespace(configMapObj("a", federationv1beta1.FinalizerDeleteFromUnderlyingClusters, metav1.FinalizerDeleteDependents, "example.com/other"), "kube-system")
	fed.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, fed)
	// A copy the member holds under the same name stays its own.
	members.Put("c1", appliedCopy(t, fed))
	tc.mustSync(t, "kube-system/a")
	assert.Empty(t, members.Actions("c1"))
	assert.Empty(t, tc.events())
	var updated *unstructured.Unstructured
	for _, a := range tc.fedClient.Actions() {
		if u, ok := a.(clienttesting.UpdateAction); ok {
			updated = u.GetObject().(*unstructured.Unstructured)
		}
	}
	require.NotNil(t, updated)
	assert.Equal(t, []string{"example.com/other"}, updated.GetFinalizers())
}
