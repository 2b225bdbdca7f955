// Package memberproxy serves clusters/NAME/proxy: a request to a member's
// API sent through the federation, authorized there for its caller.
//
// The federation's RBAC decides twice. A caller allowed the proxy
// subresource itself (admins, and the controller manager for agent
// members) goes to the member as the federation's account, which it could
// read from the federation anyway, but for a pod's logs and streams, which
// only the proxy user may open. Everyone else is authorized on the
// request they forward, as if the federation served the member's resource
// in that namespace, and goes to the member as the federation's proxy user
// (memberrbac.ProxyUser), whose member RBAC allows reads and the pod
// streams only: see Access.
package memberproxy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/memberrbac"
	"github.com/federation-v1/federation/pkg/tunnel/wire"
)

// Tunnels reach agent members.
type Tunnels interface {
	// ServeProxy sends r to path at cluster's member API through its
	// agent's tunnel, as the agent's account unless r carries
	// wire.ProxyAsHeader.
	ServeProxy(cluster, path string, w http.ResponseWriter, r *http.Request)
	// MemberConfig reaches cluster's member API through the tunnel as the
	// agent's account.
	MemberConfig(cluster string) *rest.Config
}

// SecretGetter reads a member's credentials Secret from the federation.
type SecretGetter func(ctx context.Context, namespace, name string) (*corev1.Secret, error)

// Proxy serves the proxy subresource of every Cluster.
type Proxy struct {
	// Federation is the federation's name: the member namespaces it
	// created or adopted carry it in their labels.
	Federation string
	// Authorizer is the federation's authorizer, without the deferral that
	// lets every caller reach this proxy (Deferral).
	Authorizer authorizer.Authorizer
	Secrets    SecretGetter
	Tunnels    Tunnels

	access      *Access
	memberCache *clientCache
	open        budgets
}

// New returns a Proxy.
func New(federation string, authz authorizer.Authorizer, secrets SecretGetter, tunnels Tunnels) *Proxy {
	p := &Proxy{Federation: federation, Authorizer: authz, Secrets: secrets, Tunnels: tunnels, memberCache: newClientCache(), open: newBudgets()}
	p.access = newAccess(federation, authz, p.memberNamespace)
	return p
}

// Handler serves one request to cluster's member API at path, for the
// caller in ctx.
func (p *Proxy) Handler(ctx context.Context, cluster *federationv1beta1.Cluster, path string) (http.Handler, error) {
	caller, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewUnauthorized("no user")
	}
	info, ok := genericapirequest.RequestInfoFrom(ctx)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("no request info"))
	}
	full, err := p.holdsProxy(ctx, caller, info, cluster.Name)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		wire.DropProxyIdentity(req.Header)
		dropConnectionTokens(req.Header)
		var as *identity
		switch {
		case !full:
			if err := p.access.Authorize(req.Context(), caller, cluster, req.Method, path, req.URL.Query()); err != nil {
				writeStatus(w, req, err)
				return
			}
			as = &identity{user: memberrbac.ProxyUser(p.Federation), caller: caller.GetName()}
		case p.access.PodStream(req.Method, path):
			// The federation's account may not read logs nor open exec,
			// attach or port-forward in a member: only the proxy user
			// may, also for those who hold the proxy subresource.
			as = &identity{user: memberrbac.ProxyUser(p.Federation), caller: caller.GetName()}
		}
		if !full {
			// The controller manager holds the proxy subresource, and all
			// of its watches of an agent member go through here.
			done, err := p.open.take(caller.GetName(), cluster.Name)
			if err != nil {
				writeStatus(w, req, err)
				return
			}
			defer done()
		}
		p.forward(w, req, cluster, path, as)
	}), nil
}

// holdsProxy reports whether caller may use the proxy subresource of
// cluster as such (the verb of the request to it).
func (p *Proxy) holdsProxy(ctx context.Context, caller user.Info, info *genericapirequest.RequestInfo, cluster string) (bool, error) {
	decision, _, err := p.Authorizer.Authorize(ctx, authorizer.AttributesRecord{
		User: caller, Verb: info.Verb, APIGroup: federationv1beta1.SchemeGroupVersion.Group, APIVersion: info.APIVersion,
		Resource: "clusters", Subresource: "proxy", Name: cluster, ResourceRequest: true, Path: info.Path,
	})
	if err != nil && decision != authorizer.DecisionAllow {
		return false, err
	}
	return decision == authorizer.DecisionAllow, nil
}

// identity is who a forwarded request acts as in the member: nil for the
// federation's account.
type identity struct{ user, caller string }

// forward sends req to the member.
func (p *Proxy) forward(w http.ResponseWriter, req *http.Request, cluster *federationv1beta1.Cluster, path string, as *identity) {
	if federationv1beta1.IsAgent(cluster) {
		out := req.Clone(req.Context())
		if as != nil {
			out.Header.Set(wire.ProxyAsHeader, as.user)
			out.Header.Set(wire.ProxyCallerHeader, as.caller)
		}
		p.Tunnels.ServeProxy(cluster.Name, path, w, out)
		return
	}
	member, err := p.memberCache.get(req.Context(), cluster, p.Secrets)
	if err != nil {
		writeStatus(w, req, err)
		return
	}
	member.serve(w, req, path, as)
}

// memberNamespace reads namespace in cluster as the federation's account.
func (p *Proxy) memberNamespace(ctx context.Context, cluster *federationv1beta1.Cluster, namespace string) (*corev1.Namespace, error) {
	var cfg *rest.Config
	if federationv1beta1.IsAgent(cluster) {
		cfg = p.Tunnels.MemberConfig(cluster.Name)
	} else {
		member, err := p.memberCache.get(ctx, cluster, p.Secrets)
		if err != nil {
			return nil, err
		}
		cfg = member.config
	}
	return getNamespace(ctx, cfg, namespace)
}

// location is path (and the query) at a member server.
func location(server, path, rawQuery string) (*url.URL, error) {
	u, err := url.Parse(server)
	if err != nil {
		return nil, err
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = rawQuery
	return u, nil
}

// dropConnectionTokens keeps, of the Connection header, only what HTTP/1.1
// itself uses (upgrade, keep-alive, close). A proxy removes every header
// named there, after this one set the member identity: a caller naming
// Impersonate-User or wire.ProxyAsHeader in it would have the request act
// in the member as the federation's account.
func dropConnectionTokens(h http.Header) {
	var keep []string
	for _, v := range h.Values("Connection") {
		for _, token := range strings.Split(v, ",") {
			switch t := strings.ToLower(strings.TrimSpace(token)); t {
			case "upgrade", "keep-alive", "close":
				keep = append(keep, t)
			}
		}
	}
	h.Del("Connection")
	if len(keep) > 0 {
		h.Set("Connection", strings.Join(keep, ", "))
	}
}
