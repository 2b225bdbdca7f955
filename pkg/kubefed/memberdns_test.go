package kubefed

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

const defaultCorefile = `.:53 {
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa
    forward . /etc/resolv.conf
}`

func TestForwardingBlockIsAddedOnceAndRemovedExactly(t *testing.T) {
	ctx := context.Background()
	member := fake.NewClientset(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns"},
		Data:       map[string]string{"Corefile": defaultCorefile},
	})
	corefile := func() string {
		cm, err := member.CoreV1().ConfigMaps("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
		require.NoError(t, err)
		return cm.Data["Corefile"]
	}

	changed, err := addForwarding(ctx, member, "fed", "example.com.", "127.0.0.1:5353")
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Contains(t, corefile(), "example.com. {\n    forward . 127.0.0.1:5353\n}")
	assert.Contains(t, corefile(), defaultCorefile, "the member's own configuration stays")

	changed, err = addForwarding(ctx, member, "fed", "example.com.", "127.0.0.1:5353")
	require.NoError(t, err)
	assert.False(t, changed, "joining again does not add a second block")

	_, err = addForwarding(ctx, member, "other", "other.org.", "127.0.0.1:6363")
	require.NoError(t, err)
	changed, err = removeForwarding(ctx, member, "fed")
	require.NoError(t, err)
	assert.True(t, changed)
	assert.NotContains(t, corefile(), "example.com.")
	assert.Contains(t, corefile(), "other.org.", "another federation's block stays")
	_, err = removeForwarding(ctx, member, "other")
	require.NoError(t, err)
	assert.Equal(t, defaultCorefile, corefile(), "the original Corefile comes back exactly")

	// Also one that ends in a newline.
	cm, err := member.CoreV1().ConfigMaps("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
	require.NoError(t, err)
	cm.Data["Corefile"] = defaultCorefile + "\n"
	_, err = member.CoreV1().ConfigMaps("kube-system").Update(ctx, cm, metav1.UpdateOptions{})
	require.NoError(t, err)
	_, err = addForwarding(ctx, member, "fed", "example.com.", "127.0.0.1:5353")
	require.NoError(t, err)
	_, err = removeForwarding(ctx, member, "fed")
	require.NoError(t, err)
	assert.Equal(t, defaultCorefile+"\n", corefile())
}

func TestNoClusterDNSNoChange(t *testing.T) {
	changed, err := addForwarding(context.Background(), fake.NewClientset(), "fed", "example.com.", "127.0.0.1:53")
	require.NoError(t, err)
	assert.False(t, changed)
}
