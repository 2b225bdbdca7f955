package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/federation-v1/federation/pkg/pki"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
)

// The tenant of the kubectl auth steps: a client certificate from the
// federation's CA, in group authGroup, bound to "edit" in authNamespace.
const (
	authUser      = "auth-tenant"
	authGroup     = "auth-team"
	authNamespace = "auth-team"
)

// kubectlAuth checks `kubectl auth whoami` (SelfSubjectReview) and
// `kubectl auth can-i` (SelfSubjectAccessReview, SelfSubjectRulesReview)
// at the federation, and SubjectAccessReview and LocalSubjectAccessReview
// as kubectl sends them: each answer is one that breaks if the review
// APIs or RBAC behind them break.
func kubectlAuth(t *testing.T, u *fedenv.User) {
	run := func(ctx string, args ...string) (string, error) {
		return u.Kubectl().Run(context.Background(), append([]string{"--context=" + ctx}, args...)...)
	}
	must := func(ctx string, args ...string) string {
		t.Helper()
		out, err := run(ctx, args...)
		require.NoError(t, err, out)
		return strings.TrimSpace(out)
	}
	must("fed", "create", "namespace", authNamespace)
	must("fed", "create", "rolebinding", "auth-edit", "--clusterrole=edit", "--user="+authUser, "-n", authNamespace)
	addUser(t, u, authUser, authGroup)

	// whoami: the name and groups of the certificate, and the admin's.
	var review struct {
		Status struct {
			UserInfo struct {
				Username string
				Groups   []string
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(must(authUser, "auth", "whoami", "-o", "json")), &review))
	assert.Equal(t, authUser, review.Status.UserInfo.Username)
	assert.ElementsMatch(t, []string{authGroup, "system:authenticated"}, review.Status.UserInfo.Groups)
	admin := must("fed", "auth", "whoami", "-o", "jsonpath={.status.userInfo.groups}")
	assert.Contains(t, admin, "system:masters", "the admin kubefed init made")

	// can-i answers yes with exit 0 and no with exit 1, once RBAC's cache
	// holds the new binding.
	canI := func(ctx string, args ...string) string {
		out, err := run(ctx, append([]string{"auth", "can-i"}, args...)...)
		answer := strings.TrimSpace(out)
		if (answer == "yes") != (err == nil) {
			return fmt.Sprintf("%q with error %v", answer, err)
		}
		return answer
	}
	require.NoError(t, poll.Until(context.Background(), 30*time.Second, "the tenant's binding in RBAC", func(context.Context) error {
		if got := canI(authUser, "create", "configmaps", "-n", authNamespace); got != "yes" {
			return fmt.Errorf("can-i create configmaps says %s", got)
		}
		return nil
	}))
	for _, c := range []struct {
		as   string
		args []string
		want string
	}{
		{authUser, []string{"create", "deployments.apps", "-n", authNamespace}, "yes"},
		{authUser, []string{"update", "deployments.apps", "--subresource=scale", "-n", authNamespace}, "yes"},
		{authUser, []string{"create", "configmaps", "-n", "default"}, "no"},
		{authUser, []string{"get", "secrets", "-n", "federation-system"}, "no"},
		{authUser, []string{"create", "clusters.federation"}, "no"},
		{authUser, []string{"create", "rolebindings", "-n", authNamespace}, "no"}, // edit grants no RBAC
		{authUser, []string{"get", "/version"}, "yes"},
		{authUser, []string{"get", "/metrics"}, "no"},
		{"fed", []string{"*", "*"}, "yes"},
		{"fed", []string{"create", "clusters.federation"}, "yes"},
		{"fed", []string{"create", "configmaps", "-n", "default", "--as=" + authUser}, "no"},
		{"fed", []string{"create", "configmaps", "-n", authNamespace, "--as=" + authUser}, "yes"},
	} {
		assert.Equal(t, c.want, canI(c.as, c.args...), "%s: kubectl auth can-i %s", c.as, strings.Join(c.args, " "))
	}

	// can-i --list is the tenant's rules in the namespace.
	list := must(authUser, "auth", "can-i", "--list", "-n", authNamespace)
	assert.Regexp(t, `(?m)^configmaps\s+\[\]\s+\[\]\s+\[.*create.*\]`, list)
	assert.Regexp(t, `(?m)^selfsubjectaccessreviews.authorization.k8s.io\s+\[\]\s+\[\]\s+\[create\]`, list)
	assert.NotContains(t, must(authUser, "auth", "can-i", "--list", "-n", "default"), "configmaps ")

	// The admin asks for the tenant (SubjectAccessReview) and in a
	// namespace (LocalSubjectAccessReview). --validate=false: kubectl's
	// validation of a kind without PATCH asks whether it is a custom
	// resource, and the federation serves no CRDs (404), which kubectl
	// takes as an error.
	for _, c := range []struct{ kind, namespace, want string }{
		{"SubjectAccessReview", authNamespace, "true"},
		{"SubjectAccessReview", "default", "false"},
		{"LocalSubjectAccessReview", authNamespace, "true"},
	} {
		meta := ""
		if c.kind == "LocalSubjectAccessReview" {
			meta = fmt.Sprintf("metadata: {namespace: %s}\n", c.namespace)
		}
		manifest := fmt.Sprintf("apiVersion: authorization.k8s.io/v1\nkind: %s\n%sspec:\n  user: %s\n  groups: [%s]\n"+
			"  resourceAttributes: {namespace: %s, verb: create, resource: configmaps}\n", c.kind, meta, authUser, authGroup, c.namespace)
		out, err := u.Kubectl().RunWithInput(context.Background(), manifest, "--context=fed", "create", "--validate=false", "-f", "-", "-o", "jsonpath={.status.allowed}")
		require.NoError(t, err, out)
		assert.Equal(t, c.want, out, "%s for %s in %s", c.kind, authUser, c.namespace)
	}
}

// addUser issues user a client certificate from the federation's CA and
// adds a kubeconfig context of the user's name.
func addUser(t *testing.T, u *fedenv.User, user string, groups ...string) {
	t.Helper()
	plane := u.PlaneDir("fed")
	ca, err := pki.LoadCA(filepath.Join(plane, "pki", "ca.crt"), filepath.Join(plane, "pki", "ca.key"))
	require.NoError(t, err)
	dir := t.TempDir()
	cert, key := filepath.Join(dir, user+".crt"), filepath.Join(dir, user+".key")
	require.NoError(t, ca.IssueClient(cert, key, user, groups...))
	cfg, err := clientcmd.LoadFromFile(u.Kubeconfig)
	require.NoError(t, err)
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificate: cert, ClientKey: key}
	cfg.Contexts[user] = &clientcmdapi.Context{Cluster: cfg.Contexts["fed"].Cluster, AuthInfo: user}
	require.NoError(t, clientcmd.WriteToFile(*cfg, u.Kubeconfig))
}
