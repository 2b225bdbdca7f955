package apiserver

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	federationFinalizer = "federation.kubernetes.io/delete-from-underlying-clusters"
	tombstoneLabel      = "federation.kubernetes.io/tombstone"
)

// TestFederationFinalizer checks deletion on a server of its own, with a
// cluster registered and no controller manager: Namespaces get the
// federation's finalizer from the FederationFinalizer admission plugin and
// wait for it; every other federated object is deleted at once, a
// tombstone recording its deletion in federation-system for the controller
// manager; orphan deletes wait for the controller manager.
func TestFederationFinalizer(t *testing.T) {
	s, err := startServer(t.TempDir(), filepath.Join(t.TempDir(), "data"))
	require.NoError(t, err)
	t.Cleanup(s.stop)
	k := newKubectl(t, kubectls[len(kubectls)-1], s.tokenConfig)
	finalizers := func(resource, namespace, name string) string {
		return k.jsonpath(t, resource, namespace, name, ".metadata.finalizers")
	}
	notFound := func(resource, namespace, name string) {
		t.Helper()
		_, stderr, err := k.run("", "-n", namespace, "get", resource, name)
		require.Error(t, err, "%s %s/%s is gone from the next read", resource, namespace, name)
		assert.Contains(t, stderr, "NotFound")
	}
	tombstones := func() []string {
		out := k.must(t, "", "-n", "federation-system", "get", "configmaps", "-l", tombstoneLabel,
			"-o", `jsonpath={range .items[*]}{.data.resource}{" "}{.data.namespace}/{.data.name}{"\n"}{end}`)
		return strings.Fields(strings.ReplaceAll(out, " ", "|"))
	}

	k.must(t, "", "create", "namespace", "team-a")
	k.must(t, fmtManifest("clusters.federation", "c1", ""), "create", "-f", "-")
	// The plugin learns of the cluster from its informer: a server-side dry
	// run goes through admission without storing anything.
	waitFor(t, "the plugin to see the cluster", func() bool {
		out := k.must(t, "", "create", "namespace", "probe", "--dry-run=server", "-o", "jsonpath={.metadata.finalizers}")
		return out != ""
	})

	k.must(t, "", "create", "namespace", "team-b")
	assert.Contains(t, finalizers("namespaces", "", "team-b"), federationFinalizer, "Namespaces wait for their copies")
	k.must(t, "", "-n", "team-a", "create", "configmap", "cm")
	assert.Empty(t, finalizers("configmaps", "team-a", "cm"), "other objects are deleted at once")
	k.must(t, tutorialDeployment, "-n", "team-a", "create", "-f", "-")
	assert.Empty(t, finalizers("deployments.apps", "team-a", "nginx-deployment"))

	// Deleted at once, through apps/v1 and extensions/v1beta1, each with a
	// tombstone naming it under its canonical resource.
	k.must(t, "", "-n", "team-a", "delete", "configmap", "cm", "--wait=false")
	notFound("configmap", "team-a", "cm")
	k.must(t, "", "-n", "team-a", "delete", "deployments.v1beta1.extensions", "nginx-deployment", "--wait=false")
	notFound("deployment", "team-a", "nginx-deployment")
	assert.ElementsMatch(t, []string{"configmaps|team-a/cm", "deployments|team-a/nginx-deployment"}, tombstones())

	// An object made before tombstones still carries the finalizer: it goes
	// at once too.
	k.must(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"old","namespace":"team-a","finalizers":["`+federationFinalizer+`"]}}`,
		"create", "-f", "-")
	k.must(t, "", "-n", "team-a", "delete", "configmap", "old", "--wait=false")
	notFound("configmap", "team-a", "old")

	// Deletecollection lists nothing right after.
	for _, name := range []string{"x1", "x2"} {
		k.must(t, "", "-n", "team-a", "create", "secret", "generic", name, "--from-literal=k=v")
		k.must(t, "", "-n", "team-a", "label", "secret", name, "app=y")
	}
	k.must(t, "", "-n", "team-a", "delete", "secrets", "-l", "app=y", "--wait=false")
	assert.Empty(t, k.must(t, "", "-n", "team-a", "get", "secrets", "-l", "app=y", "-o", "name"))
	assert.Len(t, tombstones(), 5)

	// Orphan: held until the controller manager has orphaned the copies.
	k.must(t, "", "-n", "team-a", "create", "configmap", "orphan-me")
	k.must(t, "", "-n", "team-a", "delete", "configmap", "orphan-me", "--cascade=orphan", "--wait=false")
	assert.Contains(t, finalizers("configmaps", "team-a", "orphan-me"), "orphan")
	assert.Len(t, tombstones(), 5, "an orphan delete writes no tombstone")

	// A Namespace is held until its finalizer goes.
	k.must(t, "", "delete", "namespace", "team-b", "--wait=false")
	assert.NotEmpty(t, k.jsonpath(t, "namespaces", "", "team-b", ".metadata.deletionTimestamp"))

	// The federation's own namespace is never propagated: no tombstone.
	k.must(t, "", "-n", "federation-system", "create", "configmap", "own")
	k.must(t, "", "-n", "federation-system", "delete", "configmap", "own", "--wait=false")
	notFound("configmap", "federation-system", "own")
	assert.Len(t, tombstones(), 5)
}
