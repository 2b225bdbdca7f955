package tunnel

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/generated/clientset/versioned/scheme"
	"github.com/federation-v1/federation/pkg/tunnel/wire"
)

// ServeProxy sends r to cluster's member API at path through the agent's
// tunnel. The caller has authorized it. Nothing of the caller's identity
// goes on: the agent acts in the member as itself.
func (h *Hub) ServeProxy(cluster, path string, w http.ResponseWriter, r *http.Request) {
	if !h.Connected(cluster) {
		writeStatus(w, r, wire.StatusTunnelDown, apierrors.NewServiceUnavailable(errNoTunnel(cluster).Error()))
		return
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	location := &url.URL{Scheme: "http", Host: wire.MemberAddress, Path: path, RawQuery: r.URL.RawQuery}
	out := r.Clone(r.Context())
	wire.DropCredentials(out.Header)
	handler := proxy.NewUpgradeAwareHandler(location, h.transport(cluster), false, false, errorResponder{cluster: cluster})
	handler.UseLocationHost = true
	// A member's redirect would send the caller, with its federation
	// credential, wherever the member says.
	handler.RejectForwardingRedirects = true
	// Watches must reach the caller as the member sends them.
	handler.FlushInterval = -1
	handler.ServeHTTP(w, out)
}

// transport returns cluster's pool of connections through its tunnel.
func (h *Hub) transport(cluster string) *http.Transport {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.transports[cluster]; ok {
		return t
	}
	t := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return h.Dial(ctx, cluster)
		},
		MaxIdleConnsPerHost:   200,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 0, // watches
	}
	h.transports[cluster] = t
	return t
}

type errorResponder struct{ cluster string }

func (e errorResponder) Error(w http.ResponseWriter, req *http.Request, err error) {
	klog.V(2).InfoS("Proxying to a member through its tunnel failed", "cluster", e.cluster, "err", err)
	writeStatus(w, req, wire.StatusTunnelDown, apierrors.NewServiceUnavailable("cluster "+e.cluster+": the request could not go through the agent's tunnel: "+err.Error()))
}

// writeStatus answers with err as a Kubernetes Status in the format the
// caller negotiated, telling the hub's callers the tunnel's state.
func writeStatus(w http.ResponseWriter, req *http.Request, tunnelStatus string, err error) {
	w.Header().Set(wire.StatusHeader, tunnelStatus)
	responsewriters.ErrorNegotiated(err, scheme.Codecs, metav1.SchemeGroupVersion, w, req)
}

// MemberConfig reaches cluster's member API through its tunnel, as the
// agent's account.
func (h *Hub) MemberConfig(cluster string) *rest.Config {
	return &rest.Config{Host: "http://" + wire.MemberAddress, Transport: h.transport(cluster), Timeout: 30 * time.Second}
}
