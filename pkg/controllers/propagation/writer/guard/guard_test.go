package guard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/record"

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// A member controller that keeps changing a copy back costs at most the
// budget's repairs, told once as a DriftConflict; the tenant's own change
// goes at once.
func TestRepairsOfACopyTheMemberKeepsChangingAreBudgeted(t *testing.T) {
	recorder := record.NewFakeRecorder(100)
	g := New(federatedtypes.ByName("configmaps"), dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), testmembers.New([]string{"c1"}),
		recorder, Config{MemberTimeout: time.Second})
	g.repairs.First = 0 // no backoff: count the repairs alone
	fed := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	fed.SetNamespace("ns")
	fed.SetName("a")

	var allowed int
	var lastErr error
	for range 20 {
		if lastErr = g.RepairAllowed("c1", fed, "h", "h", true); lastErr == nil {
			allowed++
		}
	}
	assert.Equal(t, g.repairs.Max, allowed, "the budget's repairs")
	require.Error(t, lastErr)
	assert.Contains(t, lastErr.Error(), "DriftConflict: ConfigMap ns/a in cluster c1 was changed there again after 5 repairs")
	assert.Len(t, recorder.Events, 1, "told once")
	assert.True(t, strings.HasPrefix(<-recorder.Events, "Warning DriftConflict"))

	assert.NoError(t, g.RepairAllowed("c1", fed, "h2", "h", true), "the tenant's change is no repair")
	assert.NoError(t, g.RepairAllowed("c1", fed, "h", "", false), "nor is a first write")
}

// More LISTs than a round's budget are taken in turn: every one within
// ceil(n/budget) rounds.
func TestUnheldListsTakeTurns(t *testing.T) {
	u := newUnheldReferences()
	for i := range 25 {
		u.set(copyAt{"c1", fmt.Sprintf("ns-%02d/x", i)}, unheldNames{refs: []federatedtypes.Reference{{Resource: federatedtypes.ClaimsResource, Name: "a"}}})
	}
	seen := map[string]int{}
	for range 3 {
		lists, _ := u.round(10)
		require.Len(t, lists, 10)
		for _, l := range lists {
			seen[l.namespace]++
		}
	}
	assert.Len(t, seen, 25, "every namespace in 3 rounds of 10")
}

// However many names copies give, a round makes one LIST per member,
// namespace and resource; what is known of an object that is gone is
// forgotten.
func TestUnheldNamesAreListedOncePerNamespaceAndResource(t *testing.T) {
	u := newUnheldReferences()
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	for i := range 30 {
		var refs []federatedtypes.Reference
		for j := range 100 {
			refs = append(refs, federatedtypes.Reference{Resource: secrets, Name: fmt.Sprintf("s-%d-%d", i, j), Optional: true})
		}
		u.set(copyAt{"c1", fmt.Sprintf("ns/d-%d", i)}, unheldNames{refs: refs})
	}
	lists, wants := u.round(maxUnheldLists)
	require.Len(t, lists, 1)
	assert.Len(t, wants[lists[0]].names, 3000)

	for i := range 30 {
		u.forget(fmt.Sprintf("ns/d-%d", i), nil)
	}
	assert.Empty(t, u.copies)
}
