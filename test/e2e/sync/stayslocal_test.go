package sync_test

import (
	"context"
	"strings"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// applySetParentStaysLocal: kubectl's ApplySet parent (a Secret labelled
// applyset.kubernetes.io/id) records what was applied at the federation,
// and stays there; the set's members travel and are pruned everywhere.
func applySetParentStaysLocal(f *fixture) {
	f.T.Setenv("KUBECTL_APPLYSET", "true")
	manifest := func(names ...string) string {
		var docs []string
		for _, n := range names {
			docs = append(docs, configMap("e2e", n, "", "k: v"))
		}
		return strings.Join(docs, "---\n")
	}
	apply := func(names ...string) {
		out, err := f.User.Kubectl().RunWithInput(context.Background(), manifest(names...),
			"--context=fed", "apply", "-n", "e2e", "--prune", "--applyset=web-set", "-f", "-")
		require.NoError(f.T, err, out)
	}
	apply("set-a", "set-b")
	f.WaitIn(three, configMaps, "e2e", "set-a", labelled)
	f.WaitIn(three, configMaps, "e2e", "set-b", labelled)
	parent := f.Kubectl("get", "secret", "web-set", "-n", "e2e", "-o", "jsonpath={.metadata.labels}")
	require.Contains(f.T, parent, federatedtypes.ApplySetParentLabel)
	for _, c := range three {
		s, err := f.MemberObject(context.Background(), c, secrets, "e2e", "web-set")
		require.NoError(f.T, err)
		assert.Nil(f.T, s, "the ApplySet's parent stays at the federation, not in %s", c)
	}
	apply("set-a")
	f.waitGoneAtFederation("configmap", "e2e", "set-b")
	f.WaitAbsent(three, configMaps, "e2e", "set-b")
	f.WaitIn(three, configMaps, "e2e", "set-a", labelled)
}
