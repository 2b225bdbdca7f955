package security_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/federation-v1/federation/pkg/poll"
)

func init() {
	attacks["authz: a tenant's own work propagates"] = tenantWorkPropagates
	attacks["authz: a tenant cannot read the members' credentials"] = tenantCannotReadCredentials
	attacks["authz: a tenant cannot take or break the controller managers' leader Lease"] = tenantCannotTakeTheLease
	attacks["authz: a tenant cannot register or change Clusters"] = tenantCannotWriteClusters
	attacks["authz: a tenant cannot change the DNS settings members join with"] = tenantCannotChangeDNSSettings
	attacks["authz: a tenant cannot grant itself more"] = tenantCannotEscalate
	attacks["authz: a tenant stays in its namespace"] = tenantStaysInItsNamespace
	attacks["authz: a viewer reads but writes nothing and sees no Secrets"] = viewerReadsOnly
	attacks["authz: an unbound user may do nothing"] = nobodyMayDoNothing
	attacks["authz: anonymous gets only the public-info paths"] = anonymousGetsPublicInfo
}

// refused fails unless err is kubectl's refusal naming want.
func (f *fixture) refused(out string, err error, want string) {
	f.t.Helper()
	require.Error(f.t, err, "allowed: %s", out)
	assert.Contains(f.t, err.Error()+out, want)
}

// The positive control: what the tenant may do works end to end, so that
// the refusals below are refusals and not a broken federation.
func tenantWorkPropagates(f *fixture) {
	out, err := f.applyAs(tenant, configMap(tenantNamespace, "settings", "color: blue"))
	require.NoError(f.t, err, out)
	out, err = f.as(tenant, "create", "secret", "generic", "token", "--from-literal=key=tenant-secret", "-n", tenantNamespace)
	require.NoError(f.t, err, out)
	member := f.memberClient()
	require.NoError(f.t, poll.Until(context.Background(), converge, "the tenant's ConfigMap and Secret in the member", func(ctx context.Context) error {
		cm, err := member.CoreV1().ConfigMaps(tenantNamespace).Get(ctx, "settings", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.Data["color"] != "blue" {
			return fmt.Errorf("data is %v", cm.Data)
		}
		_, err = member.CoreV1().Secrets(tenantNamespace).Get(ctx, "token", metav1.GetOptions{})
		return err
	}))
	out, err = f.as(tenant, "auth", "can-i", "create", "deployments.apps", "-n", tenantNamespace)
	require.NoError(f.t, err, out)
	assert.Equal(f.t, "yes", strings.TrimSpace(out))
}

func tenantCannotReadCredentials(f *fixture) {
	out, err := f.as(tenant, "get", "secrets", "-n", "federation-system")
	f.refused(out, err, `User "tenant" cannot list resource "secrets" in API group "" in the namespace "federation-system"`)
	secret := strings.TrimPrefix(f.admin("get", "secrets", "-n", "federation-system", "-o", "name"), "secret/")
	secret = strings.Fields(secret)[0]
	out, err = f.as(tenant, "get", "secret", secret, "-n", "federation-system", "-o", "yaml")
	f.refused(out, err, `cannot get resource "secrets"`)
	assert.NotContains(f.t, out, "token:")
	out, err = f.as(tenant, "get", "secrets", "--all-namespaces")
	f.refused(out, err, `cannot list resource "secrets" in API group "" at the cluster scope`)
}

// The controller managers elect their leader on a Lease in
// federation-system: a tenant holding or deleting it would stop them all.
func tenantCannotTakeTheLease(f *fixture) {
	const lease = "federation-controller-manager"
	var holder string
	require.NoError(f.t, poll.Until(context.Background(), time.Minute, "a controller manager holding the Lease", func(ctx context.Context) error {
		out, err := f.as("fed", "get", "lease", lease, "-n", "federation-system", "-o", "jsonpath={.spec.holderIdentity}")
		if err != nil || out == "" {
			return fmt.Errorf("holder %q: %v", out, err)
		}
		holder = out
		return nil
	}))
	out, err := f.as(tenant, "patch", "lease", lease, "-n", "federation-system", "--type=merge", "-p", `{"spec":{"holderIdentity":"tenant"}}`)
	// kubectl patch reads the object first: the read is refused already.
	f.refused(out, err, `User "tenant" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "federation-system"`)
	out, err = f.as(tenant, "delete", "lease", lease, "-n", "federation-system")
	f.refused(out, err, `cannot delete resource "leases" in API group "coordination.k8s.io" in the namespace "federation-system"`)
	assert.Equal(f.t, holder, f.admin("get", "lease", lease, "-n", "federation-system", "-o", "jsonpath={.spec.holderIdentity}"),
		"the holder is unchanged")
}

// kubefed join reads federation-system/federation-dns (zone, server) to
// point a member's cluster DNS at the federation: a tenant rewriting it
// would send every member's lookups of the zone to a server of theirs.
func tenantCannotChangeDNSSettings(f *fixture) {
	const settings = "federation-dns"
	var before string
	require.NoError(f.t, poll.Until(context.Background(), time.Minute, "the published DNS settings", func(ctx context.Context) error {
		out, err := f.as("fed", "get", "configmap", settings, "-n", "federation-system", "-o", "jsonpath={.data}")
		if err != nil || out == "" {
			return fmt.Errorf("data %q: %v", out, err)
		}
		before = out
		return nil
	}))
	out, err := f.as(tenant, "patch", "configmap", settings, "-n", "federation-system", "--type=merge", "-p", `{"data":{"server":"127.0.0.66:53"}}`)
	f.refused(out, err, `User "tenant" cannot get resource "configmaps" in API group "" in the namespace "federation-system"`)
	out, err = f.applyAs(tenant, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+settings+", namespace: federation-system}\ndata: {server: '127.0.0.66:53'}\n")
	f.refused(out, err, `cannot`)
	out, err = f.as(tenant, "delete", "configmap", settings, "-n", "federation-system")
	f.refused(out, err, `cannot delete resource "configmaps" in API group "" in the namespace "federation-system"`)
	assert.Equal(f.t, before, f.admin("get", "configmap", settings, "-n", "federation-system", "-o", "jsonpath={.data}"), "the settings are unchanged")
}

func tenantCannotWriteClusters(f *fixture) {
	cluster := `apiVersion: federation/v1beta1
kind: Cluster
metadata: {name: rogue}
spec:
  serverAddressByClientCIDRs: [{clientCIDR: 0.0.0.0/0, serverAddress: "https://127.0.0.1:1"}]
  secretRef: {name: rogue}
`
	out, err := f.applyAs(tenant, cluster)
	f.refused(out, err, `cannot get resource "clusters"`)
	out, err = f.as(tenant, "label", "cluster", member, "stolen=yes")
	f.refused(out, err, `cannot`)
	out, err = f.as(tenant, "patch", "cluster", member, "--subresource=status", "--type=merge", "-p", `{"status":{"region":"elsewhere"}}`)
	f.refused(out, err, `cannot`)
	out, err = f.as(tenant, "delete", "cluster", member)
	f.refused(out, err, `cannot delete resource "clusters"`)
	assert.NotContains(f.t, f.admin("get", "cluster", member, "--show-labels"), "stolen")
}

func tenantCannotEscalate(f *fixture) {
	// edit may not touch RBAC at all; admin could, but not beyond itself.
	out, err := f.as(tenant, "create", "rolebinding", "mine", "--clusterrole=admin", "--user="+tenant, "-n", tenantNamespace)
	f.refused(out, err, `cannot create resource "rolebindings"`)
	out, err = f.as(tenant, "create", "clusterrolebinding", "mine", "--clusterrole=cluster-admin", "--user="+tenant)
	f.refused(out, err, `cannot create resource "clusterrolebindings"`)

	f.admin("create", "rolebinding", "tenant-admin", "--clusterrole=admin", "--user="+tenant, "--namespace="+tenantNamespace)
	defer f.admin("delete", "rolebinding", "tenant-admin", "--namespace="+tenantNamespace)
	f.waitCanI(tenant, "yes", "create", "rolebindings", "-n", tenantNamespace)
	out, err = f.as(tenant, "create", "rolebinding", "mine", "--clusterrole=cluster-admin", "--user="+tenant, "-n", tenantNamespace)
	f.refused(out, err, "is attempting to grant RBAC permissions not currently held")
	out, err = f.as(tenant, "create", "rolebinding", "controller", "--clusterrole=system:federation-controller-manager", "--user="+tenant, "-n", tenantNamespace)
	f.refused(out, err, "is attempting to grant RBAC permissions not currently held")
	out, err = f.as(tenant, "get", "secrets", "-n", "federation-system", "--as=system:federation-controller-manager")
	f.refused(out, err, `cannot impersonate`)
}

func tenantStaysInItsNamespace(f *fixture) {
	out, err := f.applyAs(tenant, configMap("default", "intruder", "x: y"))
	f.refused(out, err, `in the namespace "default"`)
	out, err = f.applyAs(tenant, configMap("kube-system", "intruder", "x: y"))
	f.refused(out, err, `in the namespace "kube-system"`)
	out, err = f.as(tenant, "create", "namespace", "tenant-owned")
	f.refused(out, err, `cannot create resource "namespaces"`)
	out, err = f.as(tenant, "delete", "namespace", tenantNamespace)
	f.refused(out, err, `cannot delete resource "namespaces"`)
}

func viewerReadsOnly(f *fixture) {
	out, err := f.applyAs("fed", configMap(tenantNamespace, "visible", "a: b"))
	require.NoError(f.t, err, out)
	out, err = f.as(viewer, "get", "configmap", "visible", "-n", tenantNamespace, "-o", "jsonpath={.data.a}")
	require.NoError(f.t, err, out)
	assert.Equal(f.t, "b", out)
	out, err = f.as(viewer, "get", "deployments,services,jobs,horizontalpodautoscalers,ingresses", "-n", tenantNamespace)
	require.NoError(f.t, err, out)
	out, err = f.as(viewer, "get", "secrets", "-n", tenantNamespace)
	f.refused(out, err, `User "viewer" cannot list resource "secrets"`)
	out, err = f.applyAs(viewer, configMap(tenantNamespace, "visible", "a: changed"))
	f.refused(out, err, `cannot patch resource "configmaps"`)
	out, err = f.as(viewer, "delete", "configmap", "visible", "-n", tenantNamespace)
	f.refused(out, err, `cannot delete resource "configmaps"`)
	assert.Equal(f.t, "b", f.admin("get", "configmap", "visible", "-n", tenantNamespace, "-o", "jsonpath={.data.a}"))
}

func nobodyMayDoNothing(f *fixture) {
	out, err := f.as(nobody, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
	require.NoError(f.t, err, out)
	assert.Equal(f.t, nobody, out)
	out, err = f.as(nobody, "get", "configmaps", "-n", tenantNamespace)
	f.refused(out, err, `User "nobody" cannot list resource "configmaps"`)
	out, err = f.as(nobody, "get", "clusters")
	f.refused(out, err, `User "nobody" cannot list resource "clusters"`)
	out, err = f.as(nobody, "auth", "can-i", "--list", "-n", tenantNamespace)
	require.NoError(f.t, err, out)
	assert.NotContains(f.t, out, "configmaps")
}

func anonymousGetsPublicInfo(f *fixture) {
	server := f.admin("config", "view", "--minify", "--context=fed", "-o", "jsonpath={.clusters[0].cluster.server}")
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // only status codes matter here
	get := func(path string) (int, string) {
		resp, err := client.Get(server + path)
		require.NoError(f.t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, path := range []string{"/healthz", "/livez", "/readyz", "/version"} {
		status, body := get(path)
		assert.Equal(f.t, http.StatusOK, status, "%s: %s", path, body)
	}
	for _, path := range []string{
		"/api/v1/namespaces/federation-system/secrets", "/apis/federation/v1beta1/clusters",
		"/api/v1/namespaces", "/metrics", "/debug/pprof/", "/apis",
	} {
		status, body := get(path)
		assert.Equal(f.t, http.StatusForbidden, status, "%s: %s", path, body)
		assert.NotContains(f.t, body, "token")
	}
}

// waitCanI waits until `kubectl auth can-i` as user answers want: the
// authorizer reads bindings from a cache.
func (f *fixture) waitCanI(user, want string, args ...string) {
	f.t.Helper()
	require.NoError(f.t, poll.Until(context.Background(), 10*time.Second, fmt.Sprintf("%s can-i %v is %s", user, args, want), func(context.Context) error {
		out, _ := f.as(user, append([]string{"auth", "can-i"}, args...)...)
		if got := strings.TrimSpace(out); got != want {
			return fmt.Errorf("it is %q", got)
		}
		return nil
	}))
}
