package apiserver

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const federationFinalizer = "federation.kubernetes.io/delete-from-underlying-clusters"

// TestFederationFinalizer checks the FederationFinalizer admission plugin on
// a server of its own: without a cluster, objects are created without the
// federation's finalizer and deleted at once; once a cluster is registered,
// new federated objects carry it from their creation (outside the
// federation's own namespace), and a deletion waits for it to be removed,
// which is the controller manager's job.
func TestFederationFinalizer(t *testing.T) {
	s, err := startServer(t.TempDir(), filepath.Join(t.TempDir(), "data"))
	require.NoError(t, err)
	t.Cleanup(s.stop)
	k := newKubectl(t, kubectls[len(kubectls)-1], s.tokenConfig)
	finalizers := func(resource, namespace, name string) string {
		return k.jsonpath(t, resource, namespace, name, ".metadata.finalizers")
	}

	k.must(t, "", "create", "namespace", "team-a")
	k.must(t, "", "-n", "team-a", "create", "configmap", "before-join")
	assert.Empty(t, finalizers("configmaps", "team-a", "before-join"), "no cluster, no finalizer")

	k.must(t, fmtManifest("clusters.federation", "c1", ""), "create", "-f", "-")
	// The plugin learns of the cluster from its informer: a server-side dry
	// run goes through admission without storing anything.
	waitFor(t, "the plugin to see the cluster", func() bool {
		out := k.must(t, "", "-n", "team-a", "create", "configmap", "probe", "--dry-run=server", "-o", "jsonpath={.metadata.finalizers}")
		return out != ""
	})

	k.must(t, "", "-n", "team-a", "create", "configmap", "after-join")
	assert.Equal(t, `["`+federationFinalizer+`"]`, finalizers("configmaps", "team-a", "after-join"))
	k.must(t, tutorialDeployment, "-n", "team-a", "create", "-f", "-")
	assert.Equal(t, `["`+federationFinalizer+`"]`, finalizers("deployments.apps", "team-a", "nginx-deployment"))
	k.must(t, "", "create", "namespace", "team-b")
	assert.Contains(t, finalizers("namespaces", "", "team-b"), federationFinalizer)
	k.must(t, "", "-n", "federation-system", "create", "configmap", "own")
	assert.Empty(t, finalizers("configmaps", "federation-system", "own"), "the federation's own namespace is never propagated")
	k.must(t, fmtManifest("events", "note", "team-a"), "create", "-f", "-")
	assert.Empty(t, finalizers("events", "team-a", "note"), "not a federated type")
	k.must(t, fmtManifest("clusters.federation", "c2", ""), "create", "-f", "-")
	assert.Empty(t, finalizers("clusters.federation", "", "c2"), "not a federated type")
	k.must(t, fmtManifest("deployments.v1beta1.extensions", "old-style", "team-a"), "create", "-f", "-")
	assert.Contains(t, finalizers("deployments.apps", "team-a", "old-style"), federationFinalizer, "served under extensions/v1beta1 too")

	// A federated object is held until its finalizer goes...
	k.must(t, "", "-n", "team-a", "delete", "configmap", "after-join", "--wait=false")
	assert.NotEmpty(t, k.jsonpath(t, "configmaps", "team-a", "after-join", ".metadata.deletionTimestamp"))
	k.must(t, "", "-n", "team-a", "patch", "configmap", "after-join", "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`)
	_, stderr, err := k.run("", "-n", "team-a", "get", "configmap", "after-join")
	require.Error(t, err)
	assert.Contains(t, stderr, "NotFound")
	// ...and one created before any cluster is not.
	k.must(t, "", "-n", "team-a", "delete", "configmap", "before-join", "--wait=false")
	_, stderr, err = k.run("", "-n", "team-a", "get", "configmap", "before-join")
	require.Error(t, err)
	assert.Contains(t, stderr, "NotFound")
}
