package propagation

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

func loadBalancerService() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "finalizers": []any{federationv1beta1.FinalizerDeleteFromUnderlyingClusters}},
		"spec": map[string]any{"type": "LoadBalancer", "selector": map[string]any{"app": "web"},
			"ports": []any{map[string]any{"port": int64(80), "protocol": "TCP"}}}}}
}

// storeServicesAsKubernetes makes a fake member create Services as
// kube-apiserver does: no generation, a cluster IP of its own.
func storeServicesAsKubernetes(members *testmembers.Members, cluster string) {
	members.Clients[cluster].PrependReactor("create", "services", func(a clienttesting.Action) (bool, runtime.Object, error) {
		obj := a.(clienttesting.CreateAction).GetObject().(*unstructured.Unstructured).DeepCopy()
		obj.SetResourceVersion("1")
		obj.SetUID(types.UID("uid-" + obj.GetName()))
		_ = unstructured.SetNestedField(obj.Object, "10.0.0.5", "spec", "clusterIP")
		members.Put(cluster, obj)
		return true, obj, nil
	})
}

func TestAMemberStatusWriteIsNoDrift(t *testing.T) {
	svcs := federatedtypes.ByName("services")
	members := testmembers.New([]string{"c1"})
	storeServicesAsKubernetes(members, "c1")
	tc := newTestController(t, svcs, members, loadBalancerService())
	require.NoError(t, tc.sync(t, "ns/web"))
	require.Equal(t, []string{"create"}, members.Actions("c1"))
	tc.events()

	// The member's load balancer writes the copy's status: a new
	// resourceVersion, nothing else of it changed.
	copy1, ok := members.Get("c1", svcs.Resource, "ns", "web")
	require.True(t, ok)
	withStatus := copy1.DeepCopy()
	withStatus.SetResourceVersion("2")
	withStatus.Object["status"] = map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": "127.1.1.1"}}}}
	members.Put("c1", withStatus)
	tc.MemberChanged("c1", svcs.Resource, withStatus)
	require.NoError(t, tc.sync(t, "ns/web"))
	assert.Equal(t, []string{"create"}, members.Actions("c1"), "a status write is not drift")
	for _, e := range tc.events() {
		assert.NotContains(t, e, "Restored")
	}

	// Somebody changes its spec there: that is drift.
	edited := withStatus.DeepCopy()
	edited.SetResourceVersion("3")
	_ = unstructured.SetNestedField(edited.Object, map[string]any{"app": "other"}, "spec", "selector")
	members.Put("c1", edited)
	tc.MemberChanged("c1", svcs.Resource, edited)
	require.NoError(t, tc.sync(t, "ns/web"))
	assert.Contains(t, members.Actions("c1"), "patch:"+string(types.ApplyPatchType))
	assert.Contains(t, strings.Join(tc.events(), "\n"), "Restored Service ns/web in cluster c1: it was changed there")
}
