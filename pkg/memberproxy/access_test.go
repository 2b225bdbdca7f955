package memberproxy

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/memberrbac"
)

// rules is a fake authorizer: what each verb+resource in each namespace
// allows, "nonresource:PATH" for paths.
type rules map[string]bool

func (r rules) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	key := "nonresource:" + a.GetPath()
	if a.IsResourceRequest() {
		key = a.GetVerb() + " " + a.GetResource()
		if a.GetSubresource() != "" {
			key += "/" + a.GetSubresource()
		}
		key += " " + a.GetNamespace()
	}
	if r[key] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "no rule", nil
}

// members are fake member namespaces: name → labels; reads counts the calls.
type members struct {
	namespaces map[string]map[string]string
	reads      int
}

func (m *members) read(_ context.Context, _ *federationv1beta1.Cluster, name string) (*corev1.Namespace, error) {
	m.reads++
	labels, ok := m.namespaces[name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, nil
}

func TestAccess(t *testing.T) {
	tenant := &user.DefaultInfo{Name: "alice"}
	allowed := rules{
		"get pods team-a": true, "list pods team-a": true, "watch pods team-a": true, "get pods/log team-a": true,
		"create pods/exec team-a": true, "get deployments team-a": true, "delete pods team-a": true,
		"get secrets team-a": true, "list secrets team-a": true, "list pods adopted": true, "list pods squatted": true,
		"list pods gone": true, "list pods": true, "list nodes": true,
		"nonresource:/api": true, "nonresource:/apis/apps/v1": true, "nonresource:/metrics": true,
		"nonresource:/openapi/v2": true, "nonresource:/readyz": true, "get pods/proxy team-a": true, "get services/proxy team-a": true,
	}
	m := &members{namespaces: map[string]map[string]string{
		"team-a":   {memberrbac.CreatedByLabel: "fed"},
		"adopted":  {memberrbac.AdoptedByLabel("fed"): memberrbac.Adopted},
		"squatted": {memberrbac.CreatedByLabel: "another"},
	}}
	access := newAccess("fed", allowed, m.read)
	cluster := &federationv1beta1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster1", UID: "u1"}}

	for _, c := range []struct {
		name, method, path, query string
		// want is "" when allowed, else a part of the refusal.
		want      string
		forbidden bool
	}{
		{"list pods of its namespace", http.MethodGet, "/api/v1/namespaces/team-a/pods", "", "", false},
		{"watch them", http.MethodGet, "/api/v1/namespaces/team-a/pods", "watch=true", "", false},
		{"a pod's logs", http.MethodGet, "/api/v1/namespaces/team-a/pods/web-1/log", "follow=true", "", false},
		{"exec over websockets (a GET) is a create", http.MethodGet, "/api/v1/namespaces/team-a/pods/web-1/exec", "command=sh", "", false},
		{"exec over SPDY (a POST)", http.MethodPost, "/api/v1/namespaces/team-a/pods/web-1/exec", "command=sh", "", false},
		{"a Deployment", http.MethodGet, "/apis/apps/v1/namespaces/team-a/deployments/web", "", "", false},
		{"an adopted namespace", http.MethodGet, "/api/v1/namespaces/adopted/pods", "", "", false},
		{"discovery", http.MethodGet, "/api", "", "", false},
		{"group discovery", http.MethodGet, "/apis/apps/v1", "", "", false},

		{"another namespace", http.MethodGet, "/api/v1/namespaces/team-b/pods", "", `user "alice" may not list pods in namespace team-b`, true},
		{"port-forward it may not", http.MethodPost, "/api/v1/namespaces/team-a/pods/web-1/portforward", "", "may not create pods/portforward", true},
		{"Secrets, even where RBAC allows them", http.MethodGet, "/api/v1/namespaces/team-a/secrets", "", "Secrets are never read", true},
		{"one Secret", http.MethodGet, "/api/v1/namespaces/team-a/secrets/token", "", "Secrets are never read", true},
		{"cluster-scoped, even where RBAC allows it", http.MethodGet, "/api/v1/nodes", "", "only namespaced objects", true},
		{"every namespace at once", http.MethodGet, "/api/v1/pods", "", "only namespaced objects", true},
		{"a namespace object", http.MethodGet, "/api/v1/namespaces/team-a", "", "only namespaced objects", true},
		{"a delete RBAC allows", http.MethodDelete, "/api/v1/namespaces/team-a/pods/web-1", "", `"delete": only get, list, watch`, true},
		{"a write", http.MethodPost, "/api/v1/namespaces/team-a/configmaps", "", `"create": only get`, true},
		{"a namespace of another federation", http.MethodGet, "/api/v1/namespaces/squatted/pods", "", `not one federation "fed" created`, true},
		{"a write to a non-resource path", http.MethodPost, "/api", "", "only reads of the member's discovery", true},
		{"a non-resource path it may not read", http.MethodGet, "/metrics", "", "only reads of the member's discovery", true},
		{"the member's OpenAPI", http.MethodGet, "/openapi/v2", "", "only reads of the member's discovery", true},
		{"the member's health, verbosely", http.MethodGet, "/readyz", "verbose=true", "only reads of the member's discovery", true},
		{"a pod's own proxy", http.MethodGet, "/api/v1/namespaces/team-a/pods/web-1/proxy", "", "the members' own proxies", true},
		{"a service's proxy", http.MethodGet, "/api/v1/namespaces/team-a/services/web:80/proxy/", "", "the members' own proxies", true},
		{"a stream with PUT", http.MethodPut, "/api/v1/namespaces/team-a/pods/web-1/exec", "", "opened with GET", true},
		{"a path that climbs out", http.MethodGet, "/api/v1/namespaces/team-a/pods/web-1/log/../../../../../nodes", "", "is not clean", true},
		{"a path with an empty segment", http.MethodGet, "/api/v1/namespaces/team-a/pods//x", "", "is not clean", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			q, err := url.ParseQuery(c.query)
			require.NoError(t, err)
			err = access.Authorize(context.Background(), tenant, cluster, c.method, c.path, q)
			if !c.forbidden {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsForbidden(err) || apierrors.IsBadRequest(err), "%v", err)
			assert.Contains(t, err.Error(), c.want)
		})
	}

	t.Run("a member namespace that does not exist is not found", func(t *testing.T) {
		err := access.Authorize(context.Background(), tenant, cluster, http.MethodGet, "/api/v1/namespaces/gone/pods", nil)
		assert.True(t, apierrors.IsNotFound(err), "%v", err)
	})

	t.Run("a member's answer is kept a little while, and RBAC is asked first", func(t *testing.T) {
		reads := m.reads
		for range 3 {
			require.NoError(t, access.Authorize(context.Background(), tenant, cluster, http.MethodGet, "/api/v1/namespaces/team-a/pods", nil))
		}
		assert.Equal(t, reads, m.reads, "team-a was read before")
		require.Error(t, access.Authorize(context.Background(), tenant, cluster, http.MethodGet, "/api/v1/namespaces/team-z/pods", nil))
		assert.Equal(t, reads, m.reads, "a request RBAC refuses does not reach the member")
	})
}

func TestPodStream(t *testing.T) {
	access := newAccess("fed", rules{}, nil)
	for path, want := range map[string]bool{
		"/api/v1/namespaces/a/pods/p/log":               true,
		"/api/v1/namespaces/a/pods/p/exec":              true,
		"/api/v1/namespaces/a/pods/p/attach":            true,
		"/api/v1/namespaces/a/pods/p/portforward":       true,
		"/api/v1/namespaces/a/pods/p":                   false,
		"/api/v1/namespaces/a/pods/p/status":            false,
		"/api/v1/namespaces/a/services/s/proxy":         false,
		"/apis/example.com/v1/namespaces/a/pods/p/exec": false,
		"/api": false,
	} {
		assert.Equal(t, want, access.PodStream(http.MethodGet, path), path)
	}
}

func TestBudgets(t *testing.T) {
	b := budgets{perCaller: newOpenRequests(2), perCluster: newOpenRequests(3)}
	first, err := b.take("alice", "c1")
	require.NoError(t, err)
	_, err = b.take("alice", "c2")
	require.NoError(t, err)
	_, err = b.take("alice", "c1")
	require.Error(t, err)
	assert.True(t, apierrors.IsTooManyRequests(err), "%v", err)
	assert.Contains(t, err.Error(), `user "alice" already has 2 requests open`)
	_, err = b.take("bob", "c1")
	assert.NoError(t, err, "each caller has a budget of its own")
	_, err = b.take("carol", "c1")
	require.NoError(t, err)
	_, err = b.take("dave", "c1")
	require.Error(t, err, "but a cluster's is shared")
	assert.Contains(t, err.Error(), "3 requests are open through the members' proxy of this apiserver to cluster c1")
	first()
	_, err = b.take("dave", "c1")
	assert.NoError(t, err, "a request that ended gives its place back")
	_, err = b.take("alice", "c2")
	assert.NoError(t, err, "to its caller too")
}

func TestDropConnectionTokens(t *testing.T) {
	h := http.Header{"Connection": {"Impersonate-User, Upgrade", "X-Federation-Proxy-As,keep-alive"}}
	dropConnectionTokens(h)
	assert.Equal(t, []string{"upgrade, keep-alive"}, h.Values("Connection"))
	h = http.Header{"Connection": {"Impersonate-User"}}
	dropConnectionTokens(h)
	assert.Empty(t, h.Values("Connection"))
}
