package serviceaccounttoken

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/kubernetes/fake"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/serviceaccount"

	"github.com/federation-v1/federation/pkg/pki"
)

// store is a rest.Getter of internal objects by namespace/name.
type store map[string]runtime.Object

func (s store) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	ns, _ := genericapirequest.NamespaceFrom(ctx)
	if o, ok := s[ns+"/"+name]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(api.Resource("objects"), name)
}

func newTokens(t *testing.T, key string) *Tokens {
	t.Helper()
	keys, err := LoadKeys(key, nil)
	require.NoError(t, err)
	tokens, err := New(Options{Issuers: []string{DefaultIssuer}, Keys: keys})
	require.NoError(t, err)
	return tokens
}

func keyFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sa.key")
	created, err := EnsureSigningKey(path)
	require.NoError(t, err)
	require.True(t, created)
	return path
}

// A token the federation issued authenticates as its account while the
// account (and the Secret it is bound to) exist with the token's UIDs;
// another key's token of the same issuer does not.
func TestIssuedTokensAuthenticateWhileTheirObjectsExist(t *testing.T) {
	ctx := context.Background()
	tokens := newTokens(t, keyFile(t))
	account := &api.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "gitops", Namespace: "team", UID: "sa-1"}}
	secret := &api.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bound", Namespace: "team", UID: "secret-1"}}
	accounts, secrets := store{"team/gitops": account}, store{"team/bound": secret}
	tokens.Objects().Bind(accounts, secrets)
	auth, err := tokens.Authenticator(fake.NewSimpleClientset().CoreV1())
	require.NoError(t, err)

	issue := func(tokens *Tokens, secret *api.Secret) string {
		sc, pc, err := serviceaccount.Claims(*account, nil, secret, nil, 3600, 0, tokens.Audiences())
		require.NoError(t, err)
		token, err := tokens.Generator().GenerateToken(ctx, sc, pc)
		require.NoError(t, err)
		return token
	}
	plain, bound := issue(tokens, nil), issue(tokens, secret)
	for name, token := range map[string]string{"plain": plain, "bound": bound} {
		resp, ok, err := auth.AuthenticateToken(ctx, token)
		require.NoError(t, err, name)
		require.True(t, ok, name)
		assert.Equal(t, "system:serviceaccount:team:gitops", resp.User.GetName())
		assert.ElementsMatch(t, []string{"system:serviceaccounts", "system:serviceaccounts:team"}, resp.User.GetGroups())
	}

	// Signed with another key: refused, not passed on.
	_, ok, err := auth.AuthenticateToken(ctx, issue(newTokens(t, keyFile(t)), nil))
	assert.False(t, ok)
	assert.Error(t, err)

	// The bound Secret re-created: its UID differs.
	secrets["team/bound"] = &api.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bound", Namespace: "team", UID: "secret-2"}}
	_, ok, _ = auth.AuthenticateToken(ctx, bound)
	assert.False(t, ok, "a token bound to a Secret dies with it")
	_, ok, _ = auth.AuthenticateToken(ctx, plain)
	assert.True(t, ok)

	// The account re-created, then deleted.
	accounts["team/gitops"] = &api.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "gitops", Namespace: "team", UID: "sa-2"}}
	_, ok, _ = auth.AuthenticateToken(ctx, plain)
	assert.False(t, ok, "another account of the same name")
	delete(accounts, "team/gitops")
	_, ok, _ = auth.AuthenticateToken(ctx, plain)
	assert.False(t, ok, "a deleted account")
}

// A legacy Secret's token authenticates while the Secret holds it and
// the account exists.
func TestLegacySecretTokens(t *testing.T) {
	ctx := context.Background()
	tokens := newTokens(t, keyFile(t))
	account := corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "gitops", Namespace: "team", UID: "sa-1"}}
	secret := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "gitops-token", Namespace: "team", UID: "s-1"}}
	sc, pc := serviceaccount.LegacyClaims(account, secret)
	token, err := tokens.LegacyGenerator().GenerateToken(ctx, sc, pc)
	require.NoError(t, err)

	stored := &api.Secret{ObjectMeta: metav1.ObjectMeta{Name: "gitops-token", Namespace: "team", UID: "s-1"},
		Type: api.SecretTypeServiceAccountToken, Data: map[string][]byte{"token": []byte(token)}}
	accounts := store{"team/gitops": &api.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "gitops", Namespace: "team", UID: types.UID("sa-1")}}}
	secrets := store{"team/gitops-token": stored}
	tokens.Objects().Bind(accounts, secrets)
	client := fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "gitops-token", Namespace: "team"}})
	auth, err := tokens.Authenticator(typedcorev1.SecretsGetter(client.CoreV1()))
	require.NoError(t, err)

	resp, ok, err := auth.AuthenticateToken(ctx, token)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "system:serviceaccount:team:gitops", resp.User.GetName())

	delete(secrets, "team/gitops-token")
	_, ok, _ = auth.AuthenticateToken(ctx, token)
	assert.False(t, ok, "the Secret deleted")
}

// Before the storage is bound, no token authenticates.
func TestUnboundObjectsRefuse(t *testing.T) {
	_, err := (&Objects{}).GetServiceAccount(context.Background(), "team", "gitops")
	assert.ErrorContains(t, err, "not ready")
	_, err = (&Objects{}).Secrets().Get(context.Background(), "s", nil)
	assert.True(t, apierrors.IsServiceUnavailable(err), "%v", err)
}

// Pods and nodes cannot be bound: the error names the field.
func TestUnbindable(t *testing.T) {
	_, err := Unbindable("Pod").Get(context.Background(), "web", nil)
	assert.True(t, apierrors.IsBadRequest(err))
	assert.ErrorContains(t, err, `spec.boundObjectRef: a token cannot be bound to Pod "web"`)
}

func TestKeysAndIssuers(t *testing.T) {
	_, err := LoadKeys(filepath.Join(t.TempDir(), "absent.key"), nil)
	assert.ErrorContains(t, err, "--service-account-signing-key-file")
	key := keyFile(t)
	_, err = LoadKeys(key, []string{filepath.Join(t.TempDir(), "absent.pub")})
	assert.ErrorContains(t, err, "--service-account-key-file")
	keys, err := LoadKeys(key, []string{keyFile(t)})
	require.NoError(t, err)
	assert.Len(t, keys.Verifying, 2)

	// Kept, not replaced.
	before, err := os.ReadFile(key)
	require.NoError(t, err)
	created, err := EnsureSigningKey(key)
	require.NoError(t, err)
	assert.False(t, created)
	after, err := os.ReadFile(key)
	require.NoError(t, err)
	assert.Equal(t, before, after)
	info, err := os.Stat(key)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	assert.NoError(t, ValidateIssuer("https://federation.example.com"))
	assert.NoError(t, ValidateIssuer("federation"))
	assert.ErrorContains(t, ValidateIssuer(""), "--service-account-issuer")
	assert.ErrorContains(t, ValidateIssuer("http://[::1"), "not a URL")
	_, err = New(Options{Keys: keys})
	assert.ErrorContains(t, err, "--service-account-issuer")
}

// Token Secrets' ca.crt is the CA of the serving chain.
func TestRootCA(t *testing.T) {
	dir := t.TempDir()
	ca, err := pki.NewCA("fed-ca")
	require.NoError(t, err)
	cert, key := filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key")
	require.NoError(t, ca.IssueServing(cert, key, "federation-apiserver", "127.0.0.1"))
	leaf, err := os.ReadFile(cert)
	require.NoError(t, err)

	got, err := RootCA(cert)
	require.NoError(t, err)
	assert.Equal(t, leaf, got, "no CA in the file: the chain as it is")

	require.NoError(t, os.WriteFile(cert, append(leaf, ca.CertPEM()...), 0o600))
	got, err = RootCA(cert)
	require.NoError(t, err)
	assert.Equal(t, ca.CertPEM(), got)

	_, err = RootCA(filepath.Join(dir, "absent.crt"))
	assert.ErrorContains(t, err, "ca.crt")
}
