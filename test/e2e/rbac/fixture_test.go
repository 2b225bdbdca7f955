package rbac_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/federation-v1/federation/pkg/pki"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/memberenv"
)

// converge bounds how long propagation may take in these tests.
const converge = 45 * time.Second

const (
	// tenant is bound to the aggregated "admin" role in namespace team,
	// at the federation only.
	tenant = "tenant"
	team   = "team-r"
)

var (
	roles        = rbacv1.SchemeGroupVersion.WithResource("roles")
	roleBindings = rbacv1.SchemeGroupVersion.WithResource("rolebindings")
	members      = []string{"cluster1", "cluster2"}
)

// fixture is federation "fed" joined to both members.
type fixture struct {
	fedenv.Fixture
	env *memberenv.Environment
}

func (f *fixture) in(t *testing.T) *fixture {
	c := *f
	c.T = t
	return &c
}

// as runs kubectl in context ctx (a user of the federation, or a member).
func (f *fixture) as(ctx string, args ...string) (string, error) {
	return f.User.Kubectl().Run(context.Background(), append([]string{"--context=" + ctx}, args...)...)
}

// applyAs runs kubectl apply of manifest in context ctx.
func (f *fixture) applyAs(ctx, manifest string) (string, error) {
	return f.User.Kubectl().RunWithInput(context.Background(), manifest, "--context="+ctx, "apply", "-f", "-")
}

// refused asserts that kubectl failed, saying want.
func (f *fixture) refused(out string, err error, want string) {
	f.T.Helper()
	require.Error(f.T, err, "accepted:\n%s", out)
	assert.Contains(f.T, err.Error()+out, want)
}

// member is a member's admin client.
func (f *fixture) member(cluster string) kubernetes.Interface {
	f.T.Helper()
	c, err := f.env.Client(cluster)
	require.NoError(f.T, err)
	return c
}

// asFederation is a member client that acts as the federation does: the
// member's admin impersonating the account kubefed join made.
func (f *fixture) asFederation(cluster string) kubernetes.Interface {
	f.T.Helper()
	cfg, err := f.env.RESTConfig(cluster)
	require.NoError(f.T, err)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:federation-system:federation-fed",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:federation-system", "system:authenticated"},
	}
	c, err := kubernetes.NewForConfig(cfg)
	require.NoError(f.T, err)
	return c
}

// addUser issues user a client certificate from the federation's CA and
// adds a kubeconfig context of the user's name.
func (f *fixture) addUser(user string) {
	f.T.Helper()
	plane := f.User.PlaneDir("fed")
	ca, err := pki.LoadCA(filepath.Join(plane, "pki", "ca.crt"), filepath.Join(plane, "pki", "ca.key"))
	require.NoError(f.T, err)
	dir := f.T.TempDir()
	cert, key := filepath.Join(dir, user+".crt"), filepath.Join(dir, user+".key")
	require.NoError(f.T, ca.IssueClient(cert, key, user))
	cfg, err := clientcmd.LoadFromFile(f.User.Kubeconfig)
	require.NoError(f.T, err)
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificate: cert, ClientKey: key}
	cfg.Contexts[user] = &clientcmdapi.Context{Cluster: cfg.Contexts["fed"].Cluster, AuthInfo: user}
	require.NoError(f.T, clientcmd.WriteToFile(*cfg, f.User.Kubeconfig))
}

// waitCanI waits until `kubectl auth can-i` in context ctx answers want.
func (f *fixture) waitCanI(ctx, want string, args ...string) {
	f.T.Helper()
	require.NoError(f.T, poll.Until(context.Background(), converge, fmt.Sprintf("can-i %v in %s to say %s", args, ctx, want), func(context.Context) error {
		out, _ := f.as(ctx, append([]string{"auth", "can-i"}, args...)...)
		if got := strings.TrimSpace(out); got != want {
			return fmt.Errorf("answered %q", got)
		}
		return nil
	}))
}

// forbidden asserts a member's 403.
func forbidden(t require.TestingT, err error, want string) {
	require.Error(t, err)
	assert.True(t, apierrors.IsForbidden(err), "403: %v", err)
	assert.ErrorContains(t, err, want)
}

func role(ns, name, verbs string) string {
	return fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: %s, namespace: %s}
rules:
- {apiGroups: [""], resources: [configmaps, serviceaccounts], verbs: [%s]}
`, name, ns, verbs)
}

func roleBinding(ns, name, kind, ref, subject string) string {
	return fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: %s, namespace: %s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: %s, name: %s}
subjects:
- {kind: ServiceAccount, name: %s, namespace: %s}
`, name, ns, kind, ref, subject, ns)
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
