package memberview

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// resource is what kubefed get lists in a member.
type resource struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}

// builtinResources are the member resources get knows without asking the
// member's discovery (one request less through the proxy per member, and
// the common case): Kubernetes' stable workload resources, by plural,
// singular and short name.
var builtinResources = func() map[string]resource {
	m := map[string]resource{}
	add := func(group, version, plural, singular string, namespaced bool, short ...string) {
		r := resource{gvr: schema.GroupVersionResource{Group: group, Version: version, Resource: plural}, namespaced: namespaced}
		for _, name := range append([]string{plural, singular}, short...) {
			m[name] = r
		}
	}
	add("", "v1", "pods", "pod", true, "po")
	add("", "v1", "services", "service", true, "svc")
	add("", "v1", "configmaps", "configmap", true, "cm")
	add("", "v1", "events", "event", true, "ev")
	add("", "v1", "persistentvolumeclaims", "persistentvolumeclaim", true, "pvc")
	add("", "v1", "serviceaccounts", "serviceaccount", true, "sa")
	add("", "v1", "namespaces", "namespace", false, "ns")
	add("", "v1", "nodes", "node", false, "no")
	add("apps", "v1", "deployments", "deployment", true, "deploy")
	add("apps", "v1", "replicasets", "replicaset", true, "rs")
	add("apps", "v1", "statefulsets", "statefulset", true, "sts")
	add("apps", "v1", "daemonsets", "daemonset", true, "ds")
	add("batch", "v1", "jobs", "job", true)
	add("batch", "v1", "cronjobs", "cronjob", true, "cj")
	add("networking.k8s.io", "v1", "ingresses", "ingress", true, "ing")
	add("autoscaling", "v2", "horizontalpodautoscalers", "horizontalpodautoscaler", true, "hpa")
	return m
}()

// resolveResource finds the resource arg names (as kubectl takes it: a
// plural, singular, short name or kind, optionally with .version.group)
// in the member cfg reaches: from builtinResources, else from the member's
// discovery through the proxy, as kubectl would, within ctx's deadline.
func resolveResource(ctx context.Context, cfg *rest.Config, arg string) (resource, error) {
	if r, ok := builtinResources[strings.ToLower(arg)]; ok {
		return r, nil
	}
	cfg = rest.CopyConfig(cfg)
	// The discovery client takes no context: its requests end at the
	// deadline all the same.
	if deadline, ok := ctx.Deadline(); ok {
		cfg.Timeout = time.Until(deadline)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return resource{}, err
	}
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil)
	return mapResource(mapper, arg)
}

// mapResource maps arg with mapper, as kubectl's resource builder does.
func mapResource(mapper meta.RESTMapper, arg string) (resource, error) {
	fullySpecified, groupResource := schema.ParseResourceArg(strings.ToLower(arg))
	var gvk schema.GroupVersionKind
	if fullySpecified != nil {
		gvk, _ = mapper.KindFor(*fullySpecified)
	}
	if gvk.Empty() {
		var err error
		if gvk, err = mapper.KindFor(groupResource.WithVersion("")); err != nil {
			return resource{}, fmt.Errorf("the server does not have a resource type %q: %w", arg, err)
		}
	}
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return resource{}, fmt.Errorf("resource type %q: %w", arg, err)
	}
	return resource{gvr: mapping.Resource, namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace}, nil
}
