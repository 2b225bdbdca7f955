package propagation

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clienttesting "k8s.io/client-go/testing"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/planner/replicaplan"
)

// appliedReplicas returns spec.replicas of what was first written (created
// or applied) to a member.
func appliedReplicas(t *testing.T, members *testmembers.Members, cluster string) (int64, string) {
	t.Helper()
	for _, a := range members.Clients[cluster].Actions() {
		u := &unstructured.Unstructured{}
		switch a := a.(type) {
		case clienttesting.PatchAction:
			require.NoError(t, u.UnmarshalJSON(a.GetPatch()))
		case clienttesting.CreateAction:
			u = a.GetObject().(*unstructured.Unstructured)
		default:
			continue
		}
		n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		return n, u.GetAnnotations()[federationv1beta1.AppliedHashAnnotation]
	}
	t.Fatalf("nothing applied to %s", cluster)
	return 0, ""
}

func TestADeploymentIsDividedAndItsPlanRecorded(t *testing.T) {
	members := testmembers.New([]string{"c1", "c2", "c3"}, "c4")
	fed := deploymentObj()
	require.NoError(t, unstructured.SetNestedField(fed.Object, int64(7), "spec", "replicas"))
	tc := newTestController(t, federatedtypes.ByName("deployments"), members, fed)
	require.NoError(t, tc.sync(t, "ns/d"))

	var total int64
	hashes := map[string]bool{}
	for _, c := range []string{"c1", "c2", "c3"} {
		n, hash := appliedReplicas(t, members, c)
		assert.LessOrEqual(t, n, int64(3), "a share rounded up, as v1's planner does (3/3/1), in %s", c)
		total += n
		hashes[hash] = true
	}
	assert.Equal(t, int64(7), total)
	assert.Len(t, hashes, 2, "the hash covers each cluster's count (3/3/1)")
	assert.Empty(t, members.Actions("c4"), "a cluster that is not Ready is left alone")

	got, err := tc.fedClient.Resource(federatedtypes.ByName("deployments").Resource).Namespace("ns").Get(context.Background(), "d", metav1.GetOptions{})
	require.NoError(t, err)
	plan := replicaplan.FromAnnotations(got.GetAnnotations())
	assert.Equal(t, int64(7), plan["replicas"]["c1"]+plan["replicas"]["c2"]+plan["replicas"]["c3"])
	assert.NotContains(t, plan["replicas"], "c4")
	events := tc.events()
	require.NotEmpty(t, events)
	assert.Contains(t, events, "Normal ReplicasPlanned Replica plan: "+plan.String()+" (was: none)")
}
