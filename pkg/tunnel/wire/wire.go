// Package wire is what the federation's end of an agent tunnel (package
// tunnel) and the agent's end (package agent) agree on: the paths, the one
// address asked for through a tunnel, and the header that says who failed
// to answer a proxied request.
package wire

import (
	"net/http"
	"net/url"
	"strings"
)

// MemberAddress is the only address the federation asks an agent to dial
// through a tunnel: the agent answers it with its proxy to the member's
// API server and refuses every other address.
const MemberAddress = "member-api:443"

// StatusHeader tells who answered a proxied request that did not reach the
// member: the federation when no tunnel is open (TunnelDown), the agent
// when the member's API server did not answer (MemberUnreachable).
const (
	StatusHeader            = "X-Federation-Tunnel"
	StatusTunnelDown        = "TunnelDown"
	StatusMemberUnreachable = "MemberUnreachable"
)

// An agent holds one tunnel to each of the federation's apiservers, so
// that whichever of them a request reaches can send it to the member. Its
// apiservers usually share one address (SO_REUSEPORT, or a Service), so the
// agent cannot pick one: it dials again and again, and an apiserver that
// already holds a tunnel of that agent answers an extra dial with
// StatusAlreadyHere. InstanceHeader names the agent process (random at
// each start); RoleHeader says whether the dial is its primary tunnel
// (which always replaces an older tunnel of its cluster) or an extra one.
const (
	InstanceHeader = "X-Federation-Agent-Instance"
	RoleHeader     = "X-Federation-Agent-Tunnel"
	RolePrimary    = "primary"
	RoleExtra      = "extra"
	// StatusAlreadyHere is the HTTP status of an extra dial that reached
	// an apiserver already holding a tunnel of the same agent.
	StatusAlreadyHere = http.StatusConflict
)

const clustersPath = "/apis/federation/v1beta1/clusters/"

// TunnelPath is the path of cluster's tunnel subresource, which its agent
// opens as a websocket.
func TunnelPath(cluster string) string { return clustersPath + url.PathEscape(cluster) + "/tunnel" }

// ProxyPath is the base path, at the federation apiserver, of cluster's
// member API through its agent's tunnel.
func ProxyPath(cluster string) string { return clustersPath + url.PathEscape(cluster) + "/proxy" }

// DropCredentials removes from a request going through a tunnel whatever
// would carry its sender's identity, or ask for another: the agent acts in
// the member as itself, whoever asked.
func DropCredentials(header http.Header) {
	for name := range header {
		lower := strings.ToLower(name)
		if lower == "authorization" || lower == "cookie" || lower == "proxy-authorization" || lower == "x-forwarded-client-cert" ||
			strings.HasPrefix(lower, "impersonate-") || strings.HasPrefix(lower, "x-remote-") {
			header.Del(name)
		}
	}
}

// A request the federation proxies for a tenant must not act in the member
// as the agent's account: ProxyAsHeader names the user the agent then
// impersonates (the federation's proxy user, all the member's RBAC lets
// the account impersonate), and ProxyCallerHeader the federation user it
// came from, for the member's audit log. Without them the agent acts as
// itself, as for the federation's controllers.
const (
	ProxyAsHeader     = "X-Federation-Proxy-As"
	ProxyCallerHeader = "X-Federation-Proxy-Caller"
)

// DropProxyIdentity removes ProxyAsHeader and ProxyCallerHeader: only the
// federation's proxy sets them, never its caller.
func DropProxyIdentity(header http.Header) {
	header.Del(ProxyAsHeader)
	header.Del(ProxyCallerHeader)
}
