package sync_test

import (
	"context"
	"strings"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// systemNamespacesStayLocal: kube-system, kube-public and kube-node-lease
// exist at the federation as on a cluster (charts and `argocd cluster add`
// write there), cannot be deleted, and what is written there never reaches
// a member.
func systemNamespacesStayLocal(f *fixture) {
	for _, ns := range []string{"kube-system", "kube-public", "kube-node-lease"} {
		require.Equal(f.T, "Active", f.Kubectl("get", "namespace", ns, "-o", "jsonpath={.status.phase}"), ns)
	}
	_, err := f.User.Kubectl().Run(context.Background(), "--context="+f.Context, "delete", "namespace", "kube-system", "--wait=false")
	require.Error(f.T, err)
	assert.Contains(f.T, err.Error(), "may not be deleted")

	const name = "argocd-manager-config"
	f.Apply(configMap("kube-system", name, "", "k: v"))
	// Its NotPropagated event, then the positive control: a ConfigMap
	// written after it reaches every member.
	f.WaitEvents(name, "namespace kube-system is never propagated")
	f.Apply(configMap("e2e", name, "", "k: v"))
	f.WaitIn(three, configMaps, "e2e", name, labelled)
	for _, c := range three {
		cm, err := f.MemberObject(context.Background(), c, configMaps, "kube-system", name)
		require.NoError(f.T, err)
		assert.Nil(f.T, cm, "kube-system's ConfigMap stays at the federation, not in %s", c)
	}
}

// legacyPrune: `kubectl apply --prune -l` lists every kind of kubectl's
// default prune list, Pods, Endpoints, ReplicationControllers and
// PersistentVolumes included; the federation answers them empty, and
// the object left out of the manifest goes from the federation and every
// member.
func legacyPrune(f *fixture) {
	manifest := func(names ...string) string {
		var docs []string
		for _, n := range names {
			docs = append(docs, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+n+", namespace: e2e, labels: {prune: legacy}}\ndata: {k: v}\n")
		}
		return strings.Join(docs, "---\n")
	}
	apply := func(names ...string) {
		f.T.Helper()
		out, err := f.User.Kubectl().RunWithInput(context.Background(), manifest(names...),
			"--context="+f.Context, "apply", "-n", "e2e", "--prune", "-l", "prune=legacy", "-f", "-")
		require.NoError(f.T, err, out)
	}
	apply("legacy-a", "legacy-b")
	f.WaitIn(three, configMaps, "e2e", "legacy-b", labelled)
	apply("legacy-a")
	f.waitGoneAtFederation("configmap", "e2e", "legacy-b")
	f.WaitAbsent(three, configMaps, "e2e", "legacy-b")
	f.WaitIn(three, configMaps, "e2e", "legacy-a", labelled)

	// Read-only, empty, and a person is told where the pods are.
	_, err := f.User.Kubectl().Run(context.Background(), "--context="+f.Context, "get", "pods", "-n", "e2e", "--warnings-as-errors")
	require.Error(f.T, err)
	assert.Contains(f.T, err.Error(), "kubefed get pods")
	require.Empty(f.T, f.Kubectl("get", "pods,endpoints,replicationcontrollers", "-n", "e2e", "-o", "name"))
	out, err := f.User.Kubectl().RunWithInput(context.Background(),
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: e2e}\nspec: {containers: [{name: c, image: nginx}]}\n",
		"--context="+f.Context, "create", "-f", "-")
	require.Error(f.T, err, out)
	assert.Contains(f.T, err.Error(), "MethodNotAllowed")
}
