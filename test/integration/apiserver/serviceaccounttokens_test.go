package apiserver

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/embeddedetcd"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/serviceaccounttoken"
)

// TestHAAPIServersShareServiceAccountKey: two apiservers of one federation
// given one --service-account-signing-key-file (as kubefed init --ha and
// the chart give them) each accept the tokens the other issued, a
// TokenRequest's and a legacy token Secret's (filled by whichever leads
// the elected controllers); an apiserver on the same etcd with a key of
// its own (none given) refuses them: the key, not the stored objects, is
// what a token is verified with.
func TestHAAPIServersShareServiceAccountKey(t *testing.T) {
	ctx := t.Context()
	etcd, err := embeddedetcd.Start(t.TempDir(), 0)
	require.NoError(t, err)
	t.Cleanup(etcd.Stop)
	key := filepath.Join(t.TempDir(), "service-account.key")
	_, err = serviceaccounttoken.EnsureSigningKey(key)
	require.NoError(t, err)

	first := startHAServer(t, "the first apiserver", etcd.ClientURL(), "--service-account-signing-key-file="+key)
	second := startHAServer(t, "the second apiserver", etcd.ClientURL(), "--service-account-signing-key-file="+key)
	other := startHAServer(t, "an apiserver with its own key", etcd.ClientURL())

	_, err = first.client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ha-gitops"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	req, err := first.client.CoreV1().ServiceAccounts("default").CreateToken(ctx, "ha-gitops", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	require.NoError(t, err)
	requested := req.Status.Token
	require.NotEmpty(t, requested)

	_, err = second.client.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "ha-gitops-token", Annotations: map[string]string{corev1.ServiceAccountNameKey: "ha-gitops"}},
		Type:       corev1.SecretTypeServiceAccountToken,
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	var legacy string
	require.NoError(t, poll.Until(ctx, time.Minute, "the token Secret to be filled", func(ctx context.Context) error {
		s, err := second.client.CoreV1().Secrets("default").Get(ctx, "ha-gitops-token", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if legacy = string(s.Data[corev1.ServiceAccountTokenKey]); legacy == "" {
			return fmt.Errorf("no token yet")
		}
		return nil
	}))

	for name, token := range map[string]string{"requested": requested, "legacy": legacy} {
		for _, s := range []*haServer{first, second} {
			review, err := withBearer(t, s, token).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
			require.NoError(t, err, "the %s token at %s", name, s.name)
			assert.Equal(t, "system:serviceaccount:default:ha-gitops", review.Status.UserInfo.Username)
			assert.Contains(t, review.Status.UserInfo.Groups, "system:serviceaccounts:default")
		}
		_, err := withBearer(t, other, token).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		assert.True(t, apierrors.IsUnauthorized(err), "the %s token at %s: %v", name, other.name, err)
	}
}

// withBearer is a client of s that presents token only.
func withBearer(t *testing.T, s *haServer, token string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", s.tokenConfig)
	require.NoError(t, err)
	cfg = rest.AnonymousClientConfig(cfg)
	cfg.BearerToken = token
	c, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return c
}
