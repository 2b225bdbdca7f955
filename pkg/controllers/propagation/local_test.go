package propagation

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

func secretObj(name, typ string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "type": typ,
		"data": map[string]any{"release": "SDRzSQ=="}}}
	o.SetName(name)
	o.SetNamespace("ns")
	return o
}

func TestHelmReleaseSecretsStayAtTheFederation(t *testing.T) {
	secrets := federatedtypes.ByName("secrets")
	release := secretObj("sh.helm.release.v1.web.v1", federatedtypes.HelmReleaseSecretType)
	members := testmembers.New([]string{"c1", "c2"})
	// An earlier controller manager copied it to c2.
	earlier, _, err := plan.Desired(secrets, release, "fed", "fed-uid")
	require.NoError(t, err)
	members.Put("c2", earlier)
	tc := newTestController(t, secrets, members, release, secretObj("plain", "Opaque"))

	require.NoError(t, tc.sync(t, "ns/sh.helm.release.v1.web.v1"))
	assert.Empty(t, members.Actions("c1"), "no copy is made")
	assert.Equal(t, []string{"delete"}, members.Actions("c2"), "the earlier copy is removed")
	assert.Empty(t, tc.fedWrites(), "no finalizer, no status")

	require.NoError(t, tc.sync(t, "ns/plain"))
	assert.Equal(t, []string{"create"}, members.Actions("c1"), "an Opaque Secret travels")
}

func TestLocalSecretTypesAreAnOption(t *testing.T) {
	secrets := federatedtypes.ByName("secrets")
	members := testmembers.New([]string{"c1"})
	tc := newTestController(t, secrets, members,
		secretObj("release", federatedtypes.HelmReleaseSecretType), secretObj("mine", "example.com/mine"))
	tc.opts.LocalSecretTypes = []string{"example.com/mine"}
	tc.w = tc.newWriter()
	tc.r = tc.newReleaser()

	require.NoError(t, tc.sync(t, "ns/mine"))
	assert.Empty(t, members.Actions("c1"), "a type of the option stays")
	require.NoError(t, tc.sync(t, "ns/release"))
	assert.Equal(t, []string{"create"}, members.Actions("c1"), "Helm's type is only a default")
}

func kubernetesServiceObj(finalizers ...string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"spec": map[string]any{"type": "ClusterIP", "ports": []any{map[string]any{"name": "https", "port": int64(443)}}}}}
	o.SetName("kubernetes")
	o.SetNamespace(metav1.NamespaceDefault)
	o.SetUID("uid-kubernetes")
	o.SetFinalizers(finalizers)
	return o
}

func TestTheMembersKubernetesServiceIsNeverTouched(t *testing.T) {
	services := federatedtypes.ByName("services")
	// Not labelled local (made by a user, or before the apiserver kept its
	// own), and a member holds a copy an older federation applied over its
	// own: still nothing is written or deleted.
	fed := kubernetesServiceObj()
	members := testmembers.New([]string{"c1", "c2"})
	earlier, _, err := plan.Desired(services, fed, "fed", "fed-uid")
	require.NoError(t, err)
	members.Put("c2", earlier)
	tc := newTestController(t, services, members, fed)

	require.NoError(t, tc.sync(t, "default/kubernetes"))
	assert.Empty(t, members.Actions("c1"))
	assert.Empty(t, members.Actions("c2"))
	assert.Empty(t, tc.fedWrites())
	assert.Empty(t, tc.events(), "the federation's own default/kubernetes is expected")

	// Deleted at the federation: let go at once, the members' own kept.
	gone := deleting(kubernetesServiceObj(federationv1beta1.FinalizerDeleteFromUnderlyingClusters), 0)
	require.NoError(t, tc.indexer.Update(gone))
	_, err = tc.fedClient.Resource(services.Resource).Namespace(metav1.NamespaceDefault).Update(context.Background(), gone, metav1.UpdateOptions{})
	require.NoError(t, err)
	tc.fedClient.ClearActions()
	require.NoError(t, tc.sync(t, "default/kubernetes"))
	assert.Empty(t, members.Actions("c2"), "the copy is not deleted")
	assert.Equal(t, []string{"update"}, tc.fedWrites(), "the finalizer is removed")
}

func TestATombstoneOfTheKubernetesServiceTouchesNoMember(t *testing.T) {
	services := federatedtypes.ByName("services")
	fed := kubernetesServiceObj()
	members := testmembers.New([]string{"c1"})
	earlier, _, err := plan.Desired(services, fed, "fed", "fed-uid")
	require.NoError(t, err)
	members.Put("c1", earlier)
	tc := newTestController(t, services, members) // gone from the federation
	g := grave(t, services, fed, 0)
	tc.withTombstones(t, g)

	require.NoError(t, tc.sync(t, "default/kubernetes"))
	assert.Empty(t, members.Actions("c1"), "the member's default/kubernetes is its own")
	assert.Equal(t, []string{g.Name}, tc.deletedTombstones(), "the tombstone goes")
}
