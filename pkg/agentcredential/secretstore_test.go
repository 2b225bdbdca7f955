package agentcredential

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/certificate"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/pki"
)

// issued is a client certificate and key of ca for user, in PEM.
func issued(t *testing.T, ca *pki.CA, user string, groups ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	require.NoError(t, ca.IssueClient(certFile, keyFile, user, groups...))
	certPEM, err := os.ReadFile(certFile)
	require.NoError(t, err)
	keyPEM, err = os.ReadFile(keyFile)
	require.NoError(t, err)
	return certPEM, keyPEM
}

// emptySecret is the Secret as the agent chart creates it.
func emptySecret() *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "federation-system", Name: "federation-agent-credential"}, Type: corev1.SecretTypeOpaque}
}

func TestSecretStore(t *testing.T) {
	ca, err := pki.NewCA("agents-ca")
	require.NoError(t, err)
	client := fake.NewClientset(emptySecret())
	store := NewSecretStore(client, "federation-system", "federation-agent-credential")

	_, err = store.Current()
	var none *certificate.NoCertKeyError
	require.ErrorAs(t, err, &none, "an empty Secret holds no certificate yet")

	certPEM, keyPEM := issued(t, ca, federationv1beta1.AgentUser("c1"), federationv1beta1.AgentGroup)
	updated, err := store.Update(certPEM, keyPEM)
	require.NoError(t, err)
	assert.Equal(t, federationv1beta1.AgentUser("c1"), updated.Leaf.Subject.CommonName)
	secret, err := client.CoreV1().Secrets("federation-system").Get(context.Background(), "federation-agent-credential", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, certPEM, secret.Data[SecretCertKey])
	assert.Equal(t, keyPEM, secret.Data[SecretKeyKey])
	assert.Equal(t, corev1.SecretTypeOpaque, secret.Type, "the type the chart gave it")

	current, err := store.Current()
	require.NoError(t, err)
	assert.Equal(t, updated.Certificate, current.Certificate)
	require.NotNil(t, current.Leaf)

	// A renewal replaces both.
	certPEM2, keyPEM2 := issued(t, ca, federationv1beta1.AgentUser("c1"), federationv1beta1.AgentGroup)
	_, err = store.Update(certPEM2, keyPEM2)
	require.NoError(t, err)
	current, err = store.Current()
	require.NoError(t, err)
	assert.NotEqual(t, updated.Certificate, current.Certificate)

	// Nothing is written that is not a key pair.
	_, err = store.Update(certPEM, keyPEM2)
	require.Error(t, err)
	assert.Equal(t, certPEM2, pemOf(t, client))
}

func pemOf(t *testing.T, client *fake.Clientset) []byte {
	t.Helper()
	s, err := client.CoreV1().Secrets("federation-system").Get(context.Background(), "federation-agent-credential", metav1.GetOptions{})
	require.NoError(t, err)
	return s.Data[SecretCertKey]
}

func TestSecretStoreErrors(t *testing.T) {
	ca, err := pki.NewCA("agents-ca")
	require.NoError(t, err)
	certPEM, keyPEM := issued(t, ca, federationv1beta1.AgentUser("c1"), federationv1beta1.AgentGroup)

	missing := NewSecretStore(fake.NewClientset(), "federation-system", "federation-agent-credential")
	_, err = missing.Current()
	assert.ErrorContains(t, err, "Secret federation-system/federation-agent-credential: it does not exist")
	_, err = missing.Update(certPEM, keyPEM)
	assert.ErrorContains(t, err, "does not exist; the agent keeps its certificate there and does not create it")

	client := fake.NewClientset(emptySecret())
	client.PrependReactor("update", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "federation-agent-credential", errors.New("no"))
	})
	_, err = NewSecretStore(client, "federation-system", "federation-agent-credential").Update(certPEM, keyPEM)
	assert.ErrorContains(t, err, "may not (it needs get and update on that Secret)")

	garbled := emptySecret()
	garbled.Data = map[string][]byte{SecretCertKey: []byte("not PEM"), SecretKeyKey: keyPEM}
	_, err = NewSecretStore(fake.NewClientset(garbled), "federation-system", "federation-agent-credential").Current()
	assert.ErrorContains(t, err, "Secret federation-system/federation-agent-credential: the agent's certificate and key")
}

// TestStartWithASecretStore: an agent whose Secret holds a valid
// certificate of its cluster starts without a bootstrap token (a pod
// started again after its token was spent); one of another cluster is
// refused, naming the Secret.
func TestStartWithASecretStore(t *testing.T) {
	ca, err := pki.NewCA("agents-ca")
	require.NoError(t, err)
	fedCA, err := pki.NewCA("federation-ca")
	require.NoError(t, err)
	certPEM, keyPEM := issued(t, ca, federationv1beta1.AgentUser("c1"), federationv1beta1.AgentGroup)
	secret := emptySecret()
	secret.Data = map[string][]byte{SecretCertKey: certPEM, SecretKeyKey: keyPEM}
	store := NewSecretStore(fake.NewClientset(secret), "federation-system", "federation-agent-credential")
	cfg := Config{Server: "https://127.0.0.1:1", CAData: fedCA.CertPEM(), Cluster: "c1", Store: store}

	cred, err := Start(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(cred.Stop)
	require.NotNil(t, cred.Certificate())
	assert.Equal(t, federationv1beta1.AgentUser("c1"), cred.Certificate().Subject.CommonName)

	cfg.Cluster = "c2"
	_, err = Start(context.Background(), cfg)
	assert.ErrorContains(t, err, `Secret federation-system/federation-agent-credential holds the certificate of "system:federation:agent:c1", not of "system:federation:agent:c2"`)

	cfg.Cluster, cfg.Store = "c1", NewSecretStore(fake.NewClientset(emptySecret()), "federation-system", "federation-agent-credential")
	_, err = Start(context.Background(), cfg)
	assert.ErrorContains(t, err, "Secret federation-system/federation-agent-credential holds no valid certificate of cluster \"c1\" and no bootstrap token was given")
}
