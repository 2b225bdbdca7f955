package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/memberrbac"
	"github.com/federation-v1/federation/pkg/tunnel/wire"
)

// newMemberProxy sends what comes through the tunnel to the member's API
// server with the agent's own credentials; whatever credential or
// impersonation the request carries is dropped first. A tenant's request
// (wire.ProxyAsHeader) goes as the federation's proxy user, which the
// agent's account impersonates.
func newMemberProxy(member *rest.Config) (http.Handler, error) {
	target, err := url.Parse(member.Host)
	if err != nil || target.Host == "" {
		return nil, fmt.Errorf("the member's API server address %q: not a URL", member.Host)
	}
	if target.Scheme == "" {
		target.Scheme = "https"
	}
	transport, err := rest.TransportFor(member)
	if err != nil {
		return nil, fmt.Errorf("the member's client: %w", err)
	}
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			as, caller := r.In.Header.Get(wire.ProxyAsHeader), r.In.Header.Get(wire.ProxyCallerHeader)
			wire.DropCredentials(r.Out.Header)
			wire.DropProxyIdentity(r.Out.Header)
			if as != "" {
				memberrbac.ImpersonateProxyUser(r.Out.Header, as, caller)
			}
			agentMetrics.requests.Inc()
		},
		Transport:     transport,
		FlushInterval: -1, // watches
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			klog.V(2).InfoS("The member's API server did not answer", "path", r.URL.Path, "err", err)
			status := apierrors.NewServiceUnavailable("the agent could not reach the member's API server: " + err.Error()).Status()
			status.Code = http.StatusBadGateway
			status.Kind, status.APIVersion = "Status", "v1"
			body, _ := json.Marshal(status)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set(wire.StatusHeader, wire.StatusMemberUnreachable)
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write(body)
		},
	}, nil
}
