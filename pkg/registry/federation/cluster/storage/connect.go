package storage

import (
	"context"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/federation-v1/federation/pkg/apis/federation"
	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/memberproxy"
)

// Tunnels are the agents' tunnels held open to this apiserver.
type Tunnels interface {
	// ServeTunnel takes r over as cluster's tunnel, until it closes; serial
	// is the agent certificate's.
	ServeTunnel(cluster, serial string, w http.ResponseWriter, r *http.Request)
}

// agentCluster returns the Cluster name, if it is reached through an agent.
func agentCluster(ctx context.Context, store *REST, name string) (*federationv1beta1.Cluster, error) {
	obj, err := store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	cluster := obj.(*federationv1beta1.Cluster)
	if !federationv1beta1.IsAgent(cluster) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("cluster %s is reached directly (spec.connection is not %s): it has no agent tunnel", name, federationv1beta1.ConnectionAgent))
	}
	return cluster, nil
}

// TunnelREST is the clusters/NAME/tunnel subresource: the websocket an
// agent opens to hold its cluster's tunnel. Only that cluster's agent may
// open it, whatever RBAC says.
type TunnelREST struct {
	clusters *REST
	tunnels  Tunnels
}

var _ rest.Connecter = &TunnelREST{}

// New returns an empty Cluster.
func (r *TunnelREST) New() runtime.Object { return &federationv1beta1.Cluster{} }

// Destroy cleans up resources on shutdown.
func (r *TunnelREST) Destroy() {}

// ConnectMethods are the methods an agent opens its tunnel with.
func (r *TunnelREST) ConnectMethods() []string { return []string{http.MethodGet} }

// NewConnectOptions: the tunnel takes no options.
func (r *TunnelREST) NewConnectOptions() (runtime.Object, bool, string) {
	return &federationv1beta1.ClusterProxyOptions{}, false, ""
}

// Connect checks that the caller is the cluster's agent and hands the
// connection to the tunnels.
func (r *TunnelREST) Connect(ctx context.Context, name string, _ runtime.Object, _ rest.Responder) (http.Handler, error) {
	user, ok := genericapirequest.UserFrom(ctx)
	if !ok || user.GetName() != federationv1beta1.AgentUser(name) {
		return nil, apierrors.NewForbidden(federation.Resource("clusters/tunnel"), name,
			fmt.Errorf("only the agent of cluster %s (%s) may open its tunnel", name, federationv1beta1.AgentUser(name)))
	}
	cluster, err := agentCluster(ctx, r.clusters, name)
	if err != nil {
		return nil, err
	}
	serials := user.GetExtra()[federationv1beta1.AgentSerialExtra]
	if len(serials) != 1 || !federationv1beta1.AgentCertificateBound(cluster, serials[0]) {
		return nil, apierrors.NewForbidden(federation.Resource("clusters/tunnel"), name,
			fmt.Errorf("this certificate was not issued for the current cluster %s (it was deleted and created again, or its agent's certificates were revoked): register the agent again", name))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.tunnels.ServeTunnel(name, serials[0], w, req)
	}), nil
}

// ProxyREST is the clusters/NAME/proxy subresource: a request to
// clusters/NAME/proxy/PATH goes to PATH at the member's API server,
// directly or through its agent's tunnel, authorized for its caller by
// package memberproxy.
type ProxyREST struct {
	clusters *REST
	proxy    *memberproxy.Proxy
}

var _ rest.Connecter = &ProxyREST{}

// New returns an empty Cluster.
func (r *ProxyREST) New() runtime.Object { return &federationv1beta1.Cluster{} }

// Destroy cleans up resources on shutdown.
func (r *ProxyREST) Destroy() {}

// ConnectMethods are every method a member's API answers.
func (r *ProxyREST) ConnectMethods() []string {
	return []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}
}

// NewConnectOptions: the path under the member's API.
func (r *ProxyREST) NewConnectOptions() (runtime.Object, bool, string) {
	return &federationv1beta1.ClusterProxyOptions{}, true, "path"
}

// Connect proxies to the member.
func (r *ProxyREST) Connect(ctx context.Context, name string, opts runtime.Object, _ rest.Responder) (http.Handler, error) {
	options, ok := opts.(*federationv1beta1.ClusterProxyOptions)
	if !ok {
		return nil, fmt.Errorf("invalid options object: %#v", opts)
	}
	obj, err := r.clusters.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return r.proxy.Handler(ctx, obj.(*federationv1beta1.Cluster), options.Path)
}

// NewConnecters returns the tunnel and proxy subresources of clusters.
func NewConnecters(clusters *REST, tunnels Tunnels, proxy *memberproxy.Proxy) (*TunnelREST, *ProxyREST) {
	return &TunnelREST{clusters: clusters, tunnels: tunnels}, &ProxyREST{clusters: clusters, proxy: proxy}
}
