package memberproxy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	pathpkg "path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/memberrbac"
)

// readVerbs are what a tenant may do to a member's objects through the
// proxy; the pod streams (memberrbac.ProxyStreams) are authorized as
// create, as Kubernetes does.
var readVerbs = sets.New("get", "list", "watch")

// namespaceReader reads a member namespace as the federation's account.
type namespaceReader func(ctx context.Context, cluster *federationv1beta1.Cluster, namespace string) (*corev1.Namespace, error)

// Access authorizes a request a caller without the proxy subresource
// forwards to a member. Everything it refuses is refused before anything
// of the request reaches the member.
type Access struct {
	federation string
	authz      authorizer.Authorizer
	namespaces *ownedNamespaces
	requests   *genericapirequest.RequestInfoFactory
}

func newAccess(federation string, authz authorizer.Authorizer, read namespaceReader) *Access {
	return &Access{
		federation: federation,
		authz:      authz,
		namespaces: newOwnedNamespaces(federation, read),
		requests: &genericapirequest.RequestInfoFactory{
			APIPrefixes:          sets.NewString("api", "apis"),
			GrouplessAPIPrefixes: sets.NewString("api"),
		},
	}
}

// Authorize decides whether caller may send method path?query to cluster's
// member. It allows:
//   - reads of the member's discovery and other non-resource paths the
//     caller may read at the federation (kubectl's /api, /apis, /version);
//   - get, list and watch of a namespaced kind but Secrets, and the pod
//     streams (exec, attach, port-forward), in one namespace, when the
//     federation's RBAC would allow the caller that request in that
//     namespace, and when the member namespace is one the federation
//     created or an admin adopted for it.
//
// Everything else, writes, Secrets, cluster-scoped kinds and requests
// across namespaces, is a Forbidden error naming what was asked.
func (a *Access) Authorize(ctx context.Context, caller user.Info, cluster *federationv1beta1.Cluster, method, path string, query url.Values) error {
	// What is authorized must be what the member serves: a path with . or
	// .. segments, or empty ones, could be read one way here and another
	// there.
	if clean := pathpkg.Clean(path); clean != path && clean+"/" != path {
		return apierrors.NewBadRequest(fmt.Sprintf("the path %q through cluster %s's proxy is not clean (no ., .. or empty segments)", path, cluster.Name))
	}
	info, err := a.requests.NewRequestInfo(&http.Request{Method: method, URL: &url.URL{Path: path, RawQuery: query.Encode()}})
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("the path %q through cluster %s's proxy: %v", path, cluster.Name, err))
	}
	refuse := func(why string) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: federationv1beta1.SchemeGroupVersion.Group, Resource: "clusters/proxy"}, cluster.Name,
			fmt.Errorf("%s %s: %s", method, path, why))
	}
	if !info.IsResourceRequest {
		if (method != http.MethodGet && method != http.MethodHead) || !discoveryPath(info.Path) {
			return refuse("of a member's paths outside its API, only reads of the member's discovery (/api, /apis) and /version go through the proxy without the clusters/proxy permission")
		}
		return a.decide(ctx, refuse, authorizer.AttributesRecord{User: caller, Verb: "get", Path: info.Path})
	}
	verb := info.Verb
	resource := info.Resource
	if info.Subresource != "" {
		resource += "/" + info.Subresource
	}
	stream := info.APIGroup == "" && slices.Contains(memberrbac.ProxyStreams, resource)
	if stream {
		verb = "create"
	}
	switch {
	case stream && method != http.MethodGet && method != http.MethodPost:
		return refuse("a pod's streams are opened with GET (websockets) or POST (SPDY)")
	case info.Subresource == "proxy":
		return refuse("the members' own proxies (pods/NAME/proxy, services/NAME/proxy) are not reached through the federation's without the clusters/proxy permission")
	case info.Namespace == "" || info.Resource == "namespaces":
		return refuse("only namespaced objects, in one namespace, go through the proxy without the clusters/proxy permission (name a namespace: -n NAMESPACE)")
	case info.APIGroup == "" && info.Resource == "secrets":
		return refuse("a member's Secrets are never read through the proxy without the clusters/proxy permission (they hold the member's own tokens); read your Secrets at the federation")
	case !stream && !readVerbs.Has(verb):
		return refuse(fmt.Sprintf("%q: only get, list, watch, logs, exec, attach and port-forward go through the proxy; change objects through the federation, which owns their copies", verb))
	}
	attrs := authorizer.AttributesRecord{
		User: caller, Verb: verb, Namespace: info.Namespace, APIGroup: info.APIGroup, APIVersion: info.APIVersion,
		Resource: info.Resource, Subresource: info.Subresource, Name: info.Name, ResourceRequest: true, Path: info.Path,
	}
	if err := a.decide(ctx, refuse, attrs); err != nil {
		return err
	}
	return a.namespaces.check(ctx, cluster, info.Namespace)
}

// decide asks the federation's authorizer about attrs.
func (a *Access) decide(ctx context.Context, refuse func(string) error, attrs authorizer.AttributesRecord) error {
	decision, reason, err := a.authz.Authorize(ctx, attrs)
	if decision == authorizer.DecisionAllow {
		return nil
	}
	what := attrs.Path
	if attrs.ResourceRequest {
		what = strings.TrimSuffix(attrs.Resource+"/"+attrs.Subresource, "/")
		if attrs.APIGroup != "" {
			what += "." + attrs.APIGroup
		}
		what = fmt.Sprintf("%s %s in namespace %s", attrs.Verb, what, attrs.Namespace)
	}
	why := fmt.Sprintf("user %q may not %s at the federation", attrs.User.GetName(), what)
	if reason != "" {
		why += ": " + reason
	}
	if err != nil {
		why += ": " + err.Error()
	}
	return refuse(why)
}

// PodStream reports whether method path is a pod's logs or one of its
// streams (memberrbac.ProxyStreams).
func (a *Access) PodStream(method, path string) bool {
	info, err := a.requests.NewRequestInfo(&http.Request{Method: method, URL: &url.URL{Path: path}})
	if err != nil || !info.IsResourceRequest || info.APIGroup != "" || info.Resource != "pods" {
		return false
	}
	return info.Subresource == "log" || slices.Contains(memberrbac.ProxyStreams, "pods/"+info.Subresource)
}

// discoveryPath reports whether path is the member's API discovery or its
// version: what kubectl reads before anything else. Not /openapi (large,
// and only kubectl explain needs it), nor the health or debug paths.
func discoveryPath(path string) bool {
	path = strings.TrimSuffix(path, "/")
	return path == "/api" || path == "/apis" || path == "/version" ||
		strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/apis/")
}
