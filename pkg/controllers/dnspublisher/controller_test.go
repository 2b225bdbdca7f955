package dnspublisher

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/poll"
)

var settings = Settings{Zone: "example.com.", Server: "10.0.0.53:53"}

func configMap(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: federationv1beta1.SystemNamespace, Name: federationv1beta1.DNSConfigMap},
		Data:       data,
	}
}

// writes are the client's create, update and patch (apply) actions.
func writes(client *fake.Clientset) []clienttesting.Action {
	var out []clienttesting.Action
	for _, a := range client.Actions() {
		switch a.GetVerb() {
		case "create", "update", "patch":
			out = append(out, a)
		}
	}
	return out
}

func TestSync(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing *corev1.ConfigMap
		write    bool
		want     map[string]string
	}{
		{name: "absent: created", write: true,
			want: map[string]string{"zone": "example.com.", "server": "10.0.0.53:53"}},
		{name: "as published by kubefed init: left alone",
			existing: configMap(map[string]string{"zone": "example.com.", "server": "10.0.0.53:53"}),
			want:     map[string]string{"zone": "example.com.", "server": "10.0.0.53:53"}},
		{name: "another server: taken back, other keys kept", write: true,
			existing: configMap(map[string]string{"zone": "example.com.", "server": "127.0.0.1:1", "note": "mine"}),
			want:     map[string]string{"zone": "example.com.", "server": "10.0.0.53:53", "note": "mine"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			client := fake.NewClientset()
			if tc.existing != nil {
				client = fake.NewClientset(tc.existing)
			}
			c, err := New(client, settings)
			require.NoError(t, err)
			c.informers.Start(ctx.Done())
			// Shutdown waits for the informers, which stop with ctx.
			defer c.informers.Shutdown()
			defer cancel()
			c.informers.WaitForCacheSync(ctx.Done())
			client.ClearActions()

			require.NoError(t, c.sync(ctx, federationv1beta1.DNSConfigMap))
			if tc.write {
				require.Len(t, writes(client), 1)
				assert.Equal(t, "patch", writes(client)[0].GetVerb(), "server-side apply")
			} else {
				assert.Empty(t, writes(client))
			}
			got, err := client.CoreV1().ConfigMaps(federationv1beta1.SystemNamespace).Get(ctx, federationv1beta1.DNSConfigMap, metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.Data)
		})
	}
}

// TestRun checks that the running controller publishes the settings and
// publishes them again when the ConfigMap is deleted.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	client := fake.NewClientset()
	c, err := New(client, settings)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	configMaps := client.CoreV1().ConfigMaps(federationv1beta1.SystemNamespace)
	published := func(ctx context.Context) error {
		_, err := configMaps.Get(ctx, federationv1beta1.DNSConfigMap, metav1.GetOptions{})
		return err
	}
	require.NoError(t, poll.Until(ctx, 10*time.Second, "the DNS ConfigMap", published))
	require.NoError(t, configMaps.Delete(ctx, federationv1beta1.DNSConfigMap, metav1.DeleteOptions{}))
	require.NoError(t, poll.Until(ctx, 10*time.Second, "the DNS ConfigMap again", published))
	cancel()
	assert.NoError(t, <-done)
}

func TestNewNeedsZoneAndServer(t *testing.T) {
	_, err := New(fake.NewClientset(), Settings{Zone: "example.com."})
	assert.ErrorContains(t, err, "both a zone and a server")
}
