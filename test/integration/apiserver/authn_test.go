package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/poll"
)

// TestAuthentication checks that requests with a wrong token are rejected
// with 401, that requests without credentials are system:anonymous, which
// may read only the public health and version paths, and that the good
// token and the good client certificate are accepted, with each kubectl.
func TestAuthentication(t *testing.T) {
	status, body := shared.request(t, http.MethodGet, "/api/v1/namespaces", "", "", "")
	assert.Equal(t, http.StatusForbidden, status, "no credentials")
	assert.Contains(t, body, `User \"system:anonymous\" cannot list resource \"namespaces\"`)
	status, _ = shared.request(t, http.MethodGet, "/api/v1/namespaces", "wrong-token", "", "")
	assert.Equal(t, http.StatusUnauthorized, status, "wrong token")
	status, _ = shared.request(t, http.MethodGet, "/healthz", "wrong-token", "", "")
	assert.Equal(t, http.StatusUnauthorized, status, "wrong token for /healthz")
	for _, path := range []string{"/healthz", "/livez", "/readyz", "/version"} {
		status, body := shared.request(t, http.MethodGet, path, "", "", "")
		assert.Equal(t, http.StatusOK, status, "anonymous %s: %s", path, body)
	}
	for _, path := range []string{"/metrics", "/openapi/v2", "/apis", "/debug/pprof/"} {
		status, _ := shared.request(t, http.MethodGet, path, "", "", "")
		assert.Equal(t, http.StatusForbidden, status, "anonymous %s", path)
	}

	for _, path := range kubectls {
		t.Run(newKubectl(t, path, "").version(), func(t *testing.T) {
			// Without credentials kubectl asks for a user name on stdin
			// (and reads EOF); the 403 itself is checked above.
			newKubectl(t, path, shared.anonymousConfig).fails(t, "", "get", "namespaces")
			stderr := newKubectl(t, path, shared.badTokenConfig).fails(t, "", "get", "namespaces")
			assert.Contains(t, stderr, "the server has asked for the client to provide credentials")
			k := newKubectl(t, path, shared.tokenConfig)
			k.must(t, "", "get", "namespaces")
			k.must(t, "", "get", "clusters")
		})
	}
}

// TestAuthorization checks RBAC with the bootstrap policy: a user with no
// binding may do nothing, `kubectl auth whoami` and `auth can-i` answer,
// a binding to view lets it read everything but Secrets and write
// nothing, and it cannot grant itself more than it holds.
func TestAuthorization(t *testing.T) {
	admin := newKubectl(t, kubectls[len(kubectls)-1], shared.tokenConfig)
	user := newKubectl(t, kubectls[len(kubectls)-1], shared.certConfig)

	whoami := user.must(t, "", "auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
	assert.Equal(t, `cert-user ["testers","system:authenticated"]`, whoami)
	stderr := user.fails(t, "", "get", "namespaces")
	assert.Contains(t, stderr, `User "cert-user" cannot list resource "namespaces"`)
	assert.Equal(t, "no", canI(t, user, "list", "namespaces"))

	// Bound to view in one namespace: it reads there, not Secrets, and
	// writes nothing; the other namespaces stay closed.
	ns := "authz-view"
	admin.must(t, "", "create", "namespace", ns)
	admin.must(t, "", "create", "rolebinding", "testers-view", "--clusterrole=view", "--group=testers", "-n", ns)
	admin.must(t, "", "create", "secret", "generic", "s", "--from-literal=k=v", "-n", ns)
	t.Cleanup(func() { admin.run("", "delete", "namespace", ns, "--wait=false") })
	waitCanI(t, user, "yes", "list", "configmaps", "-n", ns)
	user.must(t, "", "get", "configmaps,deployments,services,jobs", "-n", ns)
	assert.Contains(t, user.fails(t, "", "get", "secret", "s", "-n", ns), `cannot get resource "secrets"`)
	assert.Contains(t, user.fails(t, "", "create", "configmap", "c", "-n", ns), `cannot create resource "configmaps"`)
	assert.Contains(t, user.fails(t, "", "get", "configmaps", "-n", "default"), `cannot list resource "configmaps"`)
	assert.Contains(t, user.fails(t, "", "get", "secrets", "-n", "federation-system"), `cannot list resource "secrets"`)

	// Allowed to manage RoleBindings there, it still cannot bind a role
	// that holds more than it does (RBAC's escalation check).
	admin.must(t, "", "create", "role", "binder", "--verb=create,get,list", "--resource=rolebindings", "-n", ns)
	admin.must(t, "", "create", "rolebinding", "testers-binder", "--role=binder", "--group=testers", "-n", ns)
	waitCanI(t, user, "yes", "create", "rolebindings", "-n", ns)
	stderr = user.fails(t, "", "create", "rolebinding", "mine", "--clusterrole=admin", "--user=cert-user", "-n", ns)
	assert.Contains(t, stderr, "is attempting to grant RBAC permissions not currently held")
	user.must(t, "", "create", "rolebinding", "mine", "--clusterrole=view", "--user=cert-user", "-n", ns)

	// Clusters are for admins to write; view reads them when bound
	// cluster-wide.
	assert.Equal(t, "no", canI(t, user, "create", "clusters.federation"))
	admin.must(t, "", "create", "clusterrolebinding", "testers-view", "--clusterrole=view", "--group=testers")
	t.Cleanup(func() { admin.run("", "delete", "clusterrolebinding", "testers-view") })
	waitCanI(t, user, "yes", "list", "clusters.federation")
	user.must(t, "", "get", "clusters")
	assert.Equal(t, "no", canI(t, user, "update", "clusters.federation"))
	assert.Equal(t, "no", canI(t, user, "list", "secrets", "-n", "federation-system"))
}

// TestBootstrapPolicy checks the federation's roles in the bootstrap
// policy: the controller manager may do its work and nothing more.
func TestBootstrapPolicy(t *testing.T) {
	admin := newKubectl(t, kubectls[len(kubectls)-1], shared.tokenConfig)
	as := []string{"--as=system:federation-controller-manager"}
	for _, allowed := range [][]string{
		{"watch", "deployments.apps"}, {"update", "deployments.apps/status"}, {"update", "services/federation-ingresses"},
		{"list", "secrets", "-n", "federation-system"}, {"update", "clusters.federation/status"}, {"create", "events"},
		{"update", "horizontalpodautoscalers.autoscaling"}, {"patch", "namespaces"},
		// Deployments' revision history (deploymenthistory).
		{"create", "replicasets.apps"}, {"delete", "replicasets.apps"}, {"update", "replicasets.apps/status"},
	} {
		assert.Equal(t, "yes", canI(t, admin, append(allowed, as...)...), "%v", allowed)
	}
	for _, refused := range [][]string{
		{"create", "deployments.apps"}, {"delete", "configmaps"}, {"create", "clusters.federation"},
		{"delete", "clusters.federation"}, {"create", "clusterrolebindings"}, {"create", "namespaces"},
	} {
		assert.Equal(t, "no", canI(t, admin, append(refused, as...)...), "%v", refused)
	}
	roles := admin.must(t, "", "get", "clusterroles", "-o", "name")
	for _, want := range []string{"cluster-admin", "admin", "edit", "view", "system:public-info-viewer", "system:federation:aggregate-to-view"} {
		assert.Contains(t, strings.Fields(roles), "clusterrole.rbac.authorization.k8s.io/"+want)
	}
}

// canI runs `kubectl auth can-i` and returns its answer, "yes" or "no".
func canI(t *testing.T, k *kubectl, args ...string) string {
	t.Helper()
	out, _, _ := k.run("", append([]string{"auth", "can-i"}, args...)...)
	return strings.TrimSpace(out)
}

// waitCanI waits until `kubectl auth can-i` answers want: the authorizer
// reads bindings from a cache.
func waitCanI(t *testing.T, k *kubectl, want string, args ...string) {
	t.Helper()
	require.NoError(t, poll.Until(context.Background(), 10*time.Second, fmt.Sprintf("can-i %v is %s", args, want), func(context.Context) error {
		if got := canI(t, k, args...); got != want {
			return fmt.Errorf("it is %q", got)
		}
		return nil
	}))
}
