package memberproxy

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

// The credentials Secret is read once per credentialsRecheck, not per
// proxied request; a changed Secret is used after it, a changed Cluster
// at once.
func TestMemberCredentialsAreReadOncePerRecheck(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cache := newClientCache()
	cache.now = func() time.Time { return now }
	reads, secretVersion, token := 0, "1", "first"
	secrets := func(context.Context, string, string) (*corev1.Secret, error) {
		reads++
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "c1-creds", ResourceVersion: secretVersion},
			Data: map[string][]byte{"token": []byte(token)}}, nil
	}
	cluster := &federationv1beta1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", UID: "u1", ResourceVersion: "7"},
		Spec: federationv1beta1.ClusterSpec{
			ServerAddressByClientCIDRs: []federationv1beta1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: "https://127.0.0.1:6443"}},
			SecretRef:                  &corev1.LocalObjectReference{Name: "c1-creds"}}}
	get := func() *pushedMember {
		t.Helper()
		m, err := cache.get(context.Background(), cluster, secrets)
		require.NoError(t, err)
		return m
	}
	first := get()
	for range 100 {
		assert.Same(t, first, get())
	}
	assert.Equal(t, 1, reads, "one read for 101 requests")

	secretVersion, token = "2", "rotated"
	now = now.Add(credentialsRecheck - time.Second)
	assert.Equal(t, "first", get().token, "within the recheck")
	now = now.Add(2 * time.Second)
	assert.Equal(t, "rotated", get().token, "after it")
	assert.Equal(t, 2, reads)

	same := get()
	now = now.Add(credentialsRecheck)
	assert.Same(t, same, get(), "an unchanged Secret keeps the transport")

	cluster = cluster.DeepCopy()
	cluster.ResourceVersion = "8"
	get()
	assert.Equal(t, 4, reads, "a changed Cluster reads its Secret at once")
}
