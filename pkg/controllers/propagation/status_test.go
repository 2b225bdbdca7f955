package propagation

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

func TestPropagatedConditionKeepsItsTimeWhileNothingChanges(t *testing.T) {
	t0, t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	first := propagated(nil, []string{"c2: no", "c1: no"}, false, t0)
	assert.Equal(t, "False", first["status"])
	assert.Equal(t, "c1: no; c2: no", first["message"], "sorted, whatever order the clusters answered in")
	again := propagated(map[string]any{"conditions": []any{first}}, []string{"c1: no", "c2: no"}, false, t1)
	assert.Equal(t, first, again)
	assert.Equal(t, first, propagated(map[string]any{"conditions": []any{first}}, nil, true, t1), "kept while copies are being written")
	assert.Nil(t, propagated(nil, nil, true, t1), "none before the first copies are written")
	ok := propagated(map[string]any{"conditions": []any{first}}, nil, false, t1)
	assert.Equal(t, "True", ok["status"])
	assert.Equal(t, "2026-01-01T01:00:00Z", ok["lastTransitionTime"])
}

func deploymentObj() *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"spec": map[string]any{"replicas": int64(1)}}}
	o.SetName("d")
	o.SetNamespace("ns")
	o.SetGeneration(1)
	o.SetFinalizers([]string{federationv1beta1.FinalizerDeleteFromUnderlyingClusters})
	return o
}

func TestAMemberThatRejectsGivesAConditionAndAnEvent(t *testing.T) {
	members := testmembers.New([]string{"c1", "c2"})
	members.Clients["c1"].PrependReactor("create", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(federatedtypes.ByName("deployments").Resource.GroupResource(), "d")
	})
	tc := newTestController(t, federatedtypes.ByName("deployments"), members, deploymentObj())
	require.Error(t, tc.sync(t, "ns/d"))
	statusWrites := func() []*unstructured.Unstructured {
		var out []*unstructured.Unstructured
		for _, a := range tc.fedClient.Actions() {
			if u, ok := a.(clienttesting.UpdateAction); ok && a.GetSubresource() == "status" {
				out = append(out, u.GetObject().(*unstructured.Unstructured))
			}
		}
		return out
	}
	writes := statusWrites()
	require.Len(t, writes, 2, "while the copies are written, then once they failed")
	first, _, _ := unstructured.NestedSlice(writes[0].Object, "status", "conditions")
	require.Len(t, first, 1, "no Propagated condition before the copies are written")
	last := writes[1]
	conditions, _, _ := unstructured.NestedSlice(last.Object, "status", "conditions")
	require.Len(t, conditions, 2, "Propagated and ReplicasPlaced")
	c := conditions[0].(map[string]any)
	assert.Equal(t, PropagatedCondition, c["type"])
	assert.Equal(t, ReplicasPlacedCondition, conditions[1].(map[string]any)["type"])
	assert.Equal(t, "False", c["status"])
	assert.Contains(t, c["message"], "creating Deployment ns/d in cluster c1")
	_, found, _ := unstructured.NestedInt64(last.Object, "status", "observedGeneration")
	assert.False(t, found, "not rolled out while a member lacks it")
	events := tc.events()
	assert.Contains(t, strings.Join(events, "\n"), "Warning CreateInClusterFailed Creating Deployment ns/d in cluster c1 failed")

	// The same failure again: the lister now holds the written status.
	require.NoError(t, tc.indexer.Update(last))
	require.NoError(t, tc.sync(t, "ns/d"), "the failed copy waits out its backoff")
	assert.Len(t, statusWrites(), 2, "an unchanged failure writes no status")
}

// withHash is a member copy of generation with these annotations and status.
func withHash(cluster string, generation int64, annotations map[string]string, status map[string]any) federatedtypes.Member {
	o := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	o.SetName("x")
	o.SetNamespace("ns")
	o.SetGeneration(generation)
	o.SetAnnotations(annotations)
	return federatedtypes.Member{Cluster: cluster, Object: o}
}

// A scale-up from 4 to 6: while the copies are being rewritten, their
// ready pods still count (readiness read 4, 2, 3, ... when they were
// left out); a member object that is not ours never does.
func TestReadinessCountsTheCopiesBeingChanged(t *testing.T) {
	members := testmembers.New([]string{"c1", "c2", "c3"})
	before := deploymentObj()
	_ = unstructured.SetNestedField(before.Object, int64(4), "spec", "replicas")
	ready := func(cluster string, obj *unstructured.Unstructured, n int64) {
		_ = unstructured.SetNestedField(obj.Object, n, "status", "readyReplicas")
		members.Put(cluster, obj)
	}
	for _, c := range []string{"c1", "c2"} {
		old, _, err := plan.Desired(federatedtypes.ByName("deployments"), before, "fed", "fed-uid")
		require.NoError(t, err)
		old.SetResourceVersion("1")
		ready(c, old, 2)
	}
	theirs := deploymentObj()
	theirs.SetFinalizers(nil)
	ready("c3", theirs, 5)

	after := deploymentObj()
	after.SetGeneration(2)
	_ = unstructured.SetNestedField(after.Object, int64(6), "spec", "replicas")
	tc := newTestController(t, federatedtypes.ByName("deployments"), members, after)
	require.NoError(t, tc.Sync(context.Background(), "ns/d"), "the rewrites are queued, not run")

	var status map[string]any
	for _, a := range tc.fedClient.Actions() {
		if u, ok := a.(clienttesting.UpdateAction); ok && a.GetSubresource() == "status" {
			status = u.GetObject().(*unstructured.Unstructured).Object["status"].(map[string]any)
		}
	}
	require.NotNil(t, status, "a status write")
	assert.EqualValues(t, 4, status["readyReplicas"], "c1's and c2's ready pods, not c3's object of its own")
	assert.NotContains(t, status, "observedGeneration", "not rolled out while copies are changing")
}
