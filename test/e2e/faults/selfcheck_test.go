package faults_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// checkVerifier shows, on the live federation, that the verifier finds
// what the matrix counts on it to find: a federated object without its
// copies (placed in no cluster) is lost, a copy without a federated object
// (made in a member by hand, which the federation never deletes) is
// duplicated; and that once both are removed it passes.
func (f *fixture) checkVerifier(t *testing.T) {
	const ns = "faults-verifier"
	w := newWriter(f.writes, ns)
	require.NoError(t, w.run([]op{w.createNamespace()}))
	e := expectation{ns: ns, want: w.expected}
	_, _, err := f.verifier.converge(e, time.Minute)
	require.NoError(t, err, "an empty namespace converges")

	ctx := context.Background()
	unplaced := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "unplaced", Namespace: ns, Annotations: map[string]string{
			"federation.alpha.kubernetes.io/cluster-selector": `[{"key":"faults.test/nowhere","operator":"==","values":["x"]}]`,
		}},
		Data: map[string]string{"k": "v"},
	}
	_, err = f.writes.CoreV1().ConfigMaps(ns).Create(ctx, unplaced, metav1.CreateOptions{})
	require.NoError(t, err)
	stray := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "stray", Namespace: ns, Labels: map[string]string{federationv1beta1.FederationLabel: fedName}},
		Data:       map[string]string{"k": "v"},
	}
	member := f.verifier.members[clusters[0]]
	_, err = member.CoreV1().ConfigMaps(ns).Create(ctx, stray, metav1.CreateOptions{})
	require.NoError(t, err)

	v, err := f.verifier.pass(ctx, e)
	require.NoError(t, err)
	assert.Equal(t, 1, v.Lost, "the unplaced ConfigMap has no copies: %s", v)
	assert.Equal(t, 1, v.Duplicated, "the stray in %s: %s", clusters[0], v)

	require.NoError(t, member.CoreV1().ConfigMaps(ns).Delete(ctx, "stray", metav1.DeleteOptions{}))
	require.NoError(t, f.writes.CoreV1().ConfigMaps(ns).Delete(ctx, "unplaced", metav1.DeleteOptions{}))
	_, _, err = f.verifier.converge(e, time.Minute)
	require.NoError(t, err, "both removed, the namespace converges again")
}
