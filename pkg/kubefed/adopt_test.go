package kubefed

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/federation-v1/federation/pkg/memberrbac"
)

func TestAdoptNamespacesFlag(t *testing.T) {
	require.NoError(t, validateAdoptNamespaces([]string{"default", "team-a"}))
	require.NoError(t, validateAdoptNamespaces(nil), "--adopt-namespaces= adopts none")
	for _, ns := range []string{"kube-system", "kube-public", "kube-node-lease", "federation-system"} {
		err := validateAdoptNamespaces([]string{"default", ns})
		require.Error(t, err, ns)
		assert.Contains(t, err.Error(), "--adopt-namespaces: namespace "+ns+" is the member's own")
	}
	err := validateAdoptNamespaces([]string{"Team_A"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `--adopt-namespaces: "Team_A" is not a namespace name`)

	cmd := newJoinCommand(&globalFlags{})
	f := cmd.Flags().Lookup("adopt-namespaces")
	require.NotNil(t, f)
	assert.Equal(t, "[default]", f.DefValue)
	f = cmd.Flags().Lookup("pod-security")
	require.NotNil(t, f)
	assert.Equal(t, "baseline", f.DefValue)
}

// namespaceLabels are the labels of every member namespace, by name.
func namespaceLabels(t *testing.T, member kubernetes.Interface) map[string]map[string]string {
	t.Helper()
	list, err := member.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	out := map[string]map[string]string{}
	for _, ns := range list.Items {
		out[ns.Name] = ns.Labels
	}
	return out
}

func TestAdoptAndReleaseNamespaces(t *testing.T) {
	ctx := context.Background()
	ns := func(name string, labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	member := fake.NewClientset(
		ns("default", map[string]string{"kubernetes.io/metadata.name": "default"}),
		ns("team-a", nil),
		ns("theirs", map[string]string{memberrbac.AdoptedByLabel("other"): "true"}),
		ns("again", map[string]string{memberrbac.AdoptedByLabel("fed"): "true"}),
	)
	undo := &rollback{}
	skipped, err := adoptNamespaces(ctx, member, "fed", []string{"default", "team-a", "missing", "theirs", "again"}, undo)
	require.NoError(t, err)
	assert.Equal(t, []string{"namespace missing does not exist in the member; not adopted"}, skipped)
	labels := namespaceLabels(t, member)
	assert.Equal(t, map[string]string{"kubernetes.io/metadata.name": "default", memberrbac.AdoptedByLabel("fed"): "true"}, labels["default"], "its other labels stay")
	assert.Equal(t, "true", labels["team-a"][memberrbac.AdoptedByLabel("fed")])
	assert.Equal(t, map[string]string{memberrbac.AdoptedByLabel("other"): "true", memberrbac.AdoptedByLabel("fed"): "true"}, labels["theirs"],
		"adopted for both federations")
	assert.NotContains(t, labels, "missing", "nothing is created")

	// A failed join takes off the marks it added, not those it found.
	require.NoError(t, undo.run())
	labels = namespaceLabels(t, member)
	assert.Equal(t, map[string]string{"kubernetes.io/metadata.name": "default"}, labels["default"])
	assert.Empty(t, labels["team-a"])
	assert.Equal(t, map[string]string{memberrbac.AdoptedByLabel("other"): "true"}, labels["theirs"])
	assert.Equal(t, "true", labels["again"][memberrbac.AdoptedByLabel("fed")])

	// Unjoin takes off this federation's marks only.
	_, err = adoptNamespaces(ctx, member, "fed", []string{"default", "team-a"}, &rollback{})
	require.NoError(t, err)
	require.NoError(t, releaseNamespaces(ctx, member, "fed"))
	for name, l := range namespaceLabels(t, member) {
		assert.NotContains(t, l, memberrbac.AdoptedByLabel("fed"), name)
	}
	assert.Equal(t, "true", namespaceLabels(t, member)["theirs"][memberrbac.AdoptedByLabel("other")])
	require.NoError(t, releaseNamespaces(ctx, member, "fed"), "releasing nothing is fine")
}
