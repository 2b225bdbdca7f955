// Package quotaevaluators says how the federation counts its own objects
// for ResourceQuotas: the object counts of the namespaced federated types
// (federatedtypes.QuotaCounted), which the ResourceQuota admission plugin
// enforces at the federation apiserver and the resource quota controller
// of federation-controller-manager recalculates. Compute resources, storage
// requests and Pods are not counted here: the members count and enforce
// them on their copies, and the federation reports their sum.
package quotaevaluators

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// Resources are the resources whose objects the federation counts, by the
// group-resource of every group/version they are served under
// (deployments also as extensions/deployments): each maps to the type's
// own resource, under which quotas count it. A Deployment created through
// extensions/v1beta1 counts as count/deployments.apps.
func Resources() map[schema.GroupResource]schema.GroupVersionResource {
	out := map[schema.GroupResource]schema.GroupVersionResource{}
	for _, t := range federatedtypes.All {
		if !t.Namespaced {
			continue
		}
		for _, gv := range t.ServedVersions() {
			out[schema.GroupResource{Group: gv.Group, Resource: t.Resource.Resource}] = t.Resource
		}
	}
	return out
}

var services = corev1.SchemeGroupVersion.WithResource("services")

// Evaluators are the quota evaluators of the federation's object counts,
// one per namespaced federated type: a generic object count, with its
// legacy name for the core types (configmaps, secrets, ...), and for
// Services also their load balancers and node ports. f lists the objects
// of a resource (the controller's caches); nil for admission, which only
// evaluates the object at hand.
func Evaluators(f quota.ListerForResourceFunc) []quota.Evaluator {
	var out []quota.Evaluator
	for _, t := range federatedtypes.All {
		if !t.Namespaced {
			continue
		}
		var list generic.ListFuncByNamespace
		if f != nil {
			list = generic.ListResourceUsingListerFunc(f, t.Resource)
		}
		if t.Resource == services {
			out = append(out, newServiceEvaluator(list))
			continue
		}
		var alias corev1.ResourceName
		if t.Resource.Group == "" {
			if names := federatedtypes.QuotaLegacyNames[t.Resource.Resource]; len(names) > 0 {
				alias = corev1.ResourceName(names[0])
			}
		}
		out = append(out, generic.NewObjectCountEvaluator(t.Resource.GroupResource(), list, alias))
	}
	return out
}

// Configuration is the quota configuration of the ResourceQuota admission
// plugin at the federation: these evaluators, nothing ignored (the plugin
// is only given requests for Resources).
func Configuration() quota.Configuration {
	return generic.NewConfiguration(Evaluators(nil), map[schema.GroupResource]struct{}{})
}
