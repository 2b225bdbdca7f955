package security_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/memberproxy"
	"github.com/federation-v1/federation/pkg/memberrbac"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/tunnel/wire"
)

func init() {
	attacks["proxy: a tenant reads through the members' proxy only what it may read, and nothing else reaches the member"] = proxyRefusals
}

// proxyRequest is one request through cluster1's proxy.
type proxyRequest struct {
	method, path string
	header       http.Header
	// http1 sends it over HTTP/1.1, where a Connection header may name
	// other headers (HTTP/2 has none).
	http1 bool
}

// sendThroughProxy sends r as user through the federation's proxy to the
// member, and returns the status and body (a Status's message).
func (f *fixture) sendThroughProxy(user string, r proxyRequest) (int, string) {
	f.t.Helper()
	resp := f.openThroughProxy(user, r)
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	var status metav1.Status
	if json.Unmarshal(body, &status) == nil && status.Kind == "Status" {
		return resp.StatusCode, status.Message
	}
	return resp.StatusCode, string(body)
}

func kubeconfigOf(f *fixture) *clientcmd.ClientConfigLoadingRules {
	return &clientcmd.ClientConfigLoadingRules{ExplicitPath: f.u.Kubeconfig}
}

// openThroughProxy sends r as user through the proxy and returns the
// response once its headers came, its body still open.
func (f *fixture) openThroughProxy(user string, r proxyRequest) *http.Response {
	f.t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(kubeconfigOf(f), &clientcmd.ConfigOverrides{CurrentContext: user}).ClientConfig()
	require.NoError(f.t, err)
	if r.http1 {
		cfg.NextProtos = []string{"http/1.1"}
	}
	client, err := rest.HTTPClientFor(cfg)
	require.NoError(f.t, err)
	req, err := http.NewRequestWithContext(f.t.Context(), r.method, cfg.Host+wire.ProxyPath(member)+r.path, nil)
	require.NoError(f.t, err)
	for k, v := range r.header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	require.NoError(f.t, err)
	return resp
}

// proxiedRequests is what the member logged of the proxy's requests for tenants.
func (f *fixture) proxiedRequests() []string {
	f.t.Helper()
	reqs, err := f.env.Member(member).ProxiedRequests()
	require.NoError(f.t, err)
	return reqs
}

func proxyRefusals(f *fixture) {
	out, err := f.applyAs(tenant, configMap(tenantNamespace, "proxy-probe", "seen: \"true\""))
	require.NoError(f.t, err, out)
	out, err = f.as(tenant, "create", "secret", "generic", "proxy-secret", "--from-literal=key=tenant-secret", "-n", tenantNamespace)
	require.NoError(f.t, err, out)
	memberClient := f.memberClient()
	require.NoError(f.t, poll.Until(context.Background(), converge, "the tenant's ConfigMap and Secret in the member", func(ctx context.Context) error {
		if _, err := memberClient.CoreV1().ConfigMaps(tenantNamespace).Get(ctx, "proxy-probe", metav1.GetOptions{}); err != nil {
			return err
		}
		_, err := memberClient.CoreV1().Secrets(tenantNamespace).Get(ctx, "proxy-secret", metav1.GetOptions{})
		return err
	}))
	probe := "/api/v1/namespaces/" + tenantNamespace + "/configmaps/proxy-probe"

	// The positive control, with the headers a tenant might hope the
	// proxy passes on: it goes as the proxy user, named as the tenant.
	status, body := f.sendThroughProxy(tenant, proxyRequest{method: http.MethodGet, path: probe, header: http.Header{
		wire.ProxyAsHeader:     {"admin"},
		wire.ProxyCallerHeader: {"someone-else"},
	}})
	require.Equal(f.t, http.StatusOK, status, body)
	assert.Contains(f.t, body, `"seen":"true"`)
	logged := f.proxiedRequests()
	require.NotEmpty(f.t, logged)
	assert.Equal(f.t, fmt.Sprintf("get %s as %s for [%s]", probe, memberrbac.ProxyUser("fed"), tenant), logged[len(logged)-1],
		"the member saw the proxy user, named as the tenant, whatever headers the tenant sent")

	// A Connection header naming the identity headers would have a proxy
	// drop them after the federation set them: the request must still act
	// as the proxy user, named as the tenant, and another team's admin
	// must still be refused by the member what the proxy user may not read.
	hopByHop := http.Header{"Connection": {"Impersonate-User, Impersonate-Extra-federation.kubernetes.io%2fcaller, " + wire.ProxyAsHeader}}
	status, body = f.sendThroughProxy(tenant, proxyRequest{method: http.MethodGet, path: probe, header: hopByHop, http1: true})
	require.Equal(f.t, http.StatusOK, status, body)
	logged = f.proxiedRequests()
	assert.Equal(f.t, fmt.Sprintf("get %s as %s for [%s]", probe, memberrbac.ProxyUser("fed"), tenant), logged[len(logged)-1])
	status, body = f.sendThroughProxy(teamAdmin, proxyRequest{method: http.MethodGet, path: "/apis/rbac.authorization.k8s.io/v1/namespaces/" + teamAdminNamespace + "/rolebindings", header: hopByHop, http1: true})
	assert.Equal(f.t, http.StatusForbidden, status, body)
	assert.Contains(f.t, body, `User "`+memberrbac.ProxyUser("fed")+`" cannot list resource "rolebindings"`, "the member bounded the request")

	before := f.proxiedRequests()
	for _, c := range []struct {
		user string
		req  proxyRequest
		// want is the status and a part of the answer.
		want     int
		wantBody string
	}{
		{tenant, proxyRequest{method: http.MethodGet, path: "/api/v1/namespaces/" + tenantNamespace + "/secrets/proxy-secret"}, http.StatusForbidden, "Secrets are never read"},
		{tenant, proxyRequest{method: http.MethodGet, path: "/api/v1/namespaces/" + tenantNamespace + "/secrets"}, http.StatusForbidden, "Secrets are never read"},
		{tenant, proxyRequest{method: http.MethodGet, path: "/api/v1/namespaces/" + tenantNamespace + "/secrets", header: http.Header{wire.ProxyAsHeader: {"admin"}}}, http.StatusForbidden, "Secrets are never read"},
		{tenant, proxyRequest{method: http.MethodGet, path: "/api/v1/nodes"}, http.StatusForbidden, "only namespaced objects"},
		{tenant, proxyRequest{method: http.MethodGet, path: "/api/v1/pods"}, http.StatusForbidden, "only namespaced objects"},
		{tenant, proxyRequest{method: http.MethodGet, path: "/api/v1/namespaces/kube-system/pods"}, http.StatusForbidden, "may not list pods in namespace kube-system"},
		{tenant, proxyRequest{method: http.MethodGet, path: "/api/v1/namespaces/" + teamAdminNamespace + "/configmaps"}, http.StatusForbidden, "may not list configmaps in namespace " + teamAdminNamespace},
		{tenant, proxyRequest{method: http.MethodDelete, path: probe}, http.StatusForbidden, "change objects through the federation"},
		{tenant, proxyRequest{method: http.MethodPatch, path: probe}, http.StatusForbidden, "change objects through the federation"},
		{tenant, proxyRequest{method: http.MethodPost, path: "/api/v1/namespaces/" + tenantNamespace + "/configmaps"}, http.StatusForbidden, "change objects through the federation"},
		{tenant, proxyRequest{method: http.MethodPost, path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"}, http.StatusForbidden, "only namespaced objects"},
		{tenant, proxyRequest{method: http.MethodGet, path: "/metrics"}, http.StatusForbidden, "only reads of the member's discovery"},
		{tenant, proxyRequest{method: http.MethodGet, path: "/debug/pprof/"}, http.StatusForbidden, "only reads of the member's discovery"},
		{tenant, proxyRequest{method: http.MethodGet, path: "/logs/"}, http.StatusForbidden, "only reads of the member's discovery"},
		{nobody, proxyRequest{method: http.MethodGet, path: "/openapi/v2"}, http.StatusForbidden, "only reads of the member's discovery"},
		{tenant, proxyRequest{method: http.MethodGet, path: "/api/v1/namespaces/" + tenantNamespace + "/services/web:80/proxy/"}, http.StatusForbidden, "the members' own proxies"},
		{tenant, proxyRequest{method: http.MethodGet, path: "/api/v1/namespaces/" + tenantNamespace + "/configmaps/x/../../../../../api/v1/nodes"}, http.StatusBadRequest, "is not clean"},
		{tenant, proxyRequest{method: http.MethodGet, path: "/api/v1/namespaces/" + tenantNamespace + "/configmaps/%2e%2e/%2e%2e/secrets"}, http.StatusBadRequest, "is not clean"},
		{tenant, proxyRequest{method: http.MethodGet, path: probe, header: http.Header{"Impersonate-User": {"admin"}}}, http.StatusForbidden, "cannot impersonate"},
		{viewer, proxyRequest{method: http.MethodPost, path: "/api/v1/namespaces/" + tenantNamespace + "/pods/any/exec?command=sh"}, http.StatusForbidden, `user "viewer" may not create pods/exec`},
		{viewer, proxyRequest{method: http.MethodGet, path: "/api/v1/namespaces/" + tenantNamespace + "/pods/any/exec?command=sh"}, http.StatusForbidden, `user "viewer" may not create pods/exec`},
		{nobody, proxyRequest{method: http.MethodGet, path: probe}, http.StatusForbidden, `user "nobody" may not get configmaps`},
		{teamAdmin, proxyRequest{method: http.MethodGet, path: probe}, http.StatusForbidden, `user "bob" may not get configmaps in namespace ` + tenantNamespace},
	} {
		status, body := f.sendThroughProxy(c.user, c.req)
		what := fmt.Sprintf("%s %s %s as %s", c.req.method, c.req.path, c.req.header, c.user)
		assert.Equal(f.t, c.want, status, "%s: %s", what, body)
		assert.Contains(f.t, body, c.wantBody, what)
	}
	assert.Equal(f.t, before, f.proxiedRequests(), "no refused request reached the member")

	// A tenant's open requests through the proxy are bounded: watches
	// held up to the bound, the next refused, one closed lets one more in.
	watch := proxyRequest{method: http.MethodGet, path: "/api/v1/namespaces/" + tenantNamespace + "/configmaps?watch=true"}
	var held []*http.Response
	defer func() {
		for _, r := range held {
			r.Body.Close()
		}
	}()
	for range memberproxy.MaxOpenPerCaller {
		resp := f.openThroughProxy(tenant, watch)
		require.Equal(f.t, http.StatusOK, resp.StatusCode)
		held = append(held, resp)
	}
	status, body = f.sendThroughProxy(tenant, watch)
	assert.Equal(f.t, http.StatusTooManyRequests, status, body)
	assert.Contains(f.t, body, "requests open through the members' proxy")
	status, body = f.sendThroughProxy(viewer, proxyRequest{method: http.MethodGet, path: probe})
	assert.Equal(f.t, http.StatusOK, status, "another user has a budget of its own: %s", body)
	held[0].Body.Close()
	held = held[1:]
	require.NoError(f.t, poll.Until(f.t.Context(), converge, "a place back once a watch closed", func(context.Context) error {
		if status, body := f.sendThroughProxy(tenant, proxyRequest{method: http.MethodGet, path: probe}); status != http.StatusOK {
			return fmt.Errorf("%d: %s", status, body)
		}
		return nil
	}))

	// Anonymous requests are not let through to the proxy at all.
	anonymous := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // only status codes matter here
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(kubeconfigOf(f), &clientcmd.ConfigOverrides{CurrentContext: "fed"}).ClientConfig()
	require.NoError(f.t, err)
	resp, err := anonymous.Get(cfg.Host + wire.ProxyPath(member) + probe)
	require.NoError(f.t, err)
	resp.Body.Close()
	assert.Contains(f.t, []int{http.StatusUnauthorized, http.StatusForbidden}, resp.StatusCode)
	assert.False(f.t, strings.Contains(strings.Join(f.proxiedRequests(), "\n"), "system:anonymous"))
}
