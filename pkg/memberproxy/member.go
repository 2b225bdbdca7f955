package memberproxy

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/generated/clientset/versioned/scheme"
	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/memberrbac"
	"github.com/federation-v1/federation/pkg/tunnel/wire"
)

// pushedMember is how the proxy reaches a member the federation dials: its
// address and credentials from the Cluster and its Secret.
type pushedMember struct {
	cluster string
	server  string
	// config acts as the federation's account (for the proxy's own reads).
	config *rest.Config
	// token is the account's bearer token, if it has one; transport
	// carries the TLS settings and any client certificate. The token goes
	// on each forwarded request itself, so that upgraded streams (exec,
	// port-forward), which the proxy dials itself, carry it too.
	token     string
	transport http.RoundTripper
}

// credentialsRecheck is how long a member's credentials are used without
// reading its Secret again: a rotated Secret is used within it, and a burst
// of proxied requests (kubefed get over many namespaces, a watch per pod)
// reads the Secret once, not once per request.
const credentialsRecheck = 10 * time.Second

// clientCache keeps one pushedMember per Cluster, rebuilt when the Cluster
// or its Secret changes.
type clientCache struct {
	mu      sync.Mutex
	members map[string]cachedMember
	now     func() time.Time
}

type cachedMember struct {
	// cluster is the Cluster's UID and resource version, secret its
	// Secret's resource version, read at checked.
	cluster, secret string
	checked         time.Time
	member          *pushedMember
}

func newClientCache() *clientCache {
	return &clientCache{members: map[string]cachedMember{}, now: time.Now}
}

// get returns how to reach cluster.
func (c *clientCache) get(ctx context.Context, cluster *federationv1beta1.Cluster, secrets SecretGetter) (*pushedMember, error) {
	if cluster.Spec.SecretRef == nil || cluster.Spec.SecretRef.Name == "" {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("cluster %s has no credentials (spec.secretRef)", cluster.Name))
	}
	clusterVersion := string(cluster.UID) + "/" + cluster.ResourceVersion
	c.mu.Lock()
	cached, ok := c.members[cluster.Name]
	c.mu.Unlock()
	if ok && cached.cluster == clusterVersion && c.now().Sub(cached.checked) < credentialsRecheck {
		return cached.member, nil
	}
	secret, err := secrets(ctx, federationv1beta1.SystemNamespace, cluster.Spec.SecretRef.Name)
	if err != nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("cluster %s: reading its credentials: %v", cluster.Name, err))
	}
	m := cached.member
	if !ok || cached.cluster != clusterVersion || cached.secret != secret.ResourceVersion {
		cfg, err := membercluster.RESTConfig(cluster, secret)
		if err != nil {
			return nil, apierrors.NewServiceUnavailable(err.Error())
		}
		cfg.UserAgent = "federation-apiserver-proxy"
		tlsOnly := rest.CopyConfig(cfg)
		tlsOnly.BearerToken, tlsOnly.UserAgent = "", ""
		transport, err := rest.TransportFor(tlsOnly)
		if err != nil {
			return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("cluster %s: %v", cluster.Name, err))
		}
		m = &pushedMember{cluster: cluster.Name, server: cfg.Host, config: cfg, token: cfg.BearerToken, transport: transport}
	}
	c.mu.Lock()
	c.members[cluster.Name] = cachedMember{cluster: clusterVersion, secret: secret.ResourceVersion, checked: c.now(), member: m}
	c.mu.Unlock()
	return m, nil
}

// serve sends req to path at the member, as as (nil: the federation's account).
func (m *pushedMember) serve(w http.ResponseWriter, req *http.Request, path string, as *identity) {
	loc, err := location(m.server, path, req.URL.RawQuery)
	if err != nil {
		writeStatus(w, req, apierrors.NewServiceUnavailable(fmt.Sprintf("cluster %s: its address %q: %v", m.cluster, m.server, err)))
		return
	}
	out := req.Clone(req.Context())
	wire.DropCredentials(out.Header)
	if m.token != "" {
		out.Header.Set("Authorization", "Bearer "+m.token)
	}
	if as != nil {
		memberrbac.ImpersonateProxyUser(out.Header, as.user, as.caller)
	}
	handler := proxy.NewUpgradeAwareHandler(loc, m.transport, false, false, responder{cluster: m.cluster})
	handler.UseLocationHost = true
	// A member's redirect would send the caller wherever the member says.
	handler.RejectForwardingRedirects = true
	// Watches and logs -f reach the caller as the member sends them.
	handler.FlushInterval = -1
	handler.ServeHTTP(w, out)
}

type responder struct{ cluster string }

func (r responder) Error(w http.ResponseWriter, req *http.Request, err error) {
	klog.V(2).InfoS("Proxying to a member failed", "cluster", r.cluster, "err", err)
	writeStatus(w, req, apierrors.NewServiceUnavailable("cluster "+r.cluster+": the member did not answer: "+err.Error()))
}

// writeStatus answers with err as a Kubernetes Status, in the format the
// caller negotiated (kubectl prints its message).
func writeStatus(w http.ResponseWriter, req *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, scheme.Codecs, metav1.SchemeGroupVersion, w, req)
}
