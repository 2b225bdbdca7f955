package federated

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	api "k8s.io/kubernetes/pkg/apis/core"
)

func TestPropagated(t *testing.T) {
	secrets := schema.GroupResource{Resource: "secrets"}
	namespaces := schema.GroupResource{Resource: "namespaces"}
	for _, c := range []struct {
		name string
		gr   schema.GroupResource
		ns   string
		obj  metav1.Object
		want bool
	}{
		{"a Secret", secrets, "team-a", &api.Secret{Type: api.SecretTypeOpaque}, true},
		{"a token Secret: the federation's own token", secrets, "team-a", &api.Secret{Type: api.SecretTypeServiceAccountToken}, false},
		{"a local Secret", secrets, "team-a", &api.Secret{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"federation.kubernetes.io/local": "true"}}}, false},
		{"a Helm release", secrets, "team-a", &api.Secret{Type: "helm.sh/release.v1"}, false},
		{"a Secret of kube-system", secrets, "kube-system", &api.Secret{}, false},
		{"the Namespace kube-system", namespaces, "", &api.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}}, false},
		{"a Namespace", namespaces, "", &api.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, true},
	} {
		assert.Equal(t, c.want, Propagated(c.gr, c.ns, c.obj), c.name)
	}
}

func TestLookup(t *testing.T) {
	ctx := context.Background()
	var l Lookup
	require.Error(t, l.ValidateInitialization())
	// Only the client knows team-b and its account: created a moment ago.
	client := fake.NewSimpleClientset(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "app"}},
	)
	factory := informers.NewSharedInformerFactory(client, 0)
	l.SetExternalKubeInformerFactory(factory)
	l.SetExternalKubeClientSet(client)
	require.NoError(t, l.ValidateInitialization())
	// Only the caches know team-a and its account.
	require.NoError(t, factory.Core().V1().Namespaces().Informer().GetIndexer().Add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}))
	require.NoError(t, factory.Core().V1().ServiceAccounts().Informer().GetIndexer().Add(
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "app"}}))

	for _, name := range []string{"team-a", "team-b"} {
		ns, err := l.Namespace(ctx, name)
		require.NoError(t, err)
		require.NotNil(t, ns, name)
		sa, err := l.ServiceAccount(ctx, name, "app")
		require.NoError(t, err)
		require.NotNil(t, sa, name)
	}
	ns, err := l.Namespace(ctx, "team-c")
	assert.NoError(t, err)
	assert.Nil(t, ns)
	sa, err := l.ServiceAccount(ctx, "team-a", "ghost")
	assert.NoError(t, err)
	assert.Nil(t, sa)
}
