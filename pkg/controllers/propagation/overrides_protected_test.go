package propagation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// An object admitted before overrides were checked for protected fields:
// the cluster whose rule changes one gets no copy, the others theirs.
func TestOverrideOfAProtectedFieldFailsThatCluster(t *testing.T) {
	secrets := federatedtypes.ByName("secrets")
	fed := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"data": map[string]any{"k": "dg=="}}}
	fed.SetName("a")
	fed.SetNamespace("ns")
	fed.SetAnnotations(map[string]string{federationv1beta1.OverridesAnnotation: `[
		{"clusters":["c2"],"annotations":{"kubernetes.io/service-account.name":"admin"}},
		{"clusters":["c1"],"annotations":{"note":"c1"}}]`})
	members := testmembers.New([]string{"c1", "c2"})
	tc := newTestController(t, secrets, members, fed)
	require.NoError(t, tc.sync(t, "ns/a"))

	cp, ok := members.Get("c1", secrets.Resource, "ns", "a")
	require.True(t, ok, "c1 gets its copy")
	assert.Equal(t, "c1", cp.GetAnnotations()["note"])
	_, ok = members.Get("c2", secrets.Resource, "ns", "a")
	assert.False(t, ok, "c2 is left alone")
	assert.Empty(t, members.Actions("c2"))
	assert.Contains(t, tc.events(), "Warning OverrideFailed Overrides of Secret ns/a failed in cluster c2, whose copy is left as it was: "+
		"overrides[0]: Forbidden: an override may not change metadata.annotations[kubernetes.io/service-account.name]: "+
		"it is checked at the federation on the object itself (set it there)")
}
