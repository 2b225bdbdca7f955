package quotaevaluators

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	api "k8s.io/kubernetes/pkg/apis/core"
)

// serviceResources are what a Service counts for, as Kubernetes' service
// evaluator (k8s.io/kubernetes/pkg/quota/v1/evaluator/core, whose package
// brings the scheduler's and DRA's with it) counts them.
var serviceResources = []corev1.ResourceName{
	generic.ObjectCountQuotaResourceNameFor(services.GroupResource()),
	corev1.ResourceServices,
	corev1.ResourceServicesNodePorts,
	corev1.ResourceServicesLoadBalancers,
}

// serviceEvaluator counts Services, their load balancers and node ports,
// from typed (internal or v1) or unstructured Services.
type serviceEvaluator struct {
	list generic.ListFuncByNamespace
}

func newServiceEvaluator(list generic.ListFuncByNamespace) quota.Evaluator {
	return &serviceEvaluator{list: list}
}

func (*serviceEvaluator) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

func (*serviceEvaluator) GroupResource() schema.GroupResource { return services.GroupResource() }

// Handles creates and updates: a Service's type can change.
func (*serviceEvaluator) Handles(a admission.Attributes) bool {
	if a.GetSubresource() != "" {
		return false
	}
	return a.GetOperation() == admission.Create || a.GetOperation() == admission.Update
}

func (e *serviceEvaluator) Matches(q *corev1.ResourceQuota, item runtime.Object) (bool, error) {
	return generic.Matches(q, item, e.MatchingResources, generic.MatchesNoScopeFunc)
}

func (*serviceEvaluator) MatchingScopes(runtime.Object, []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return []corev1.ScopedResourceSelectorRequirement{}, nil
}

func (*serviceEvaluator) UncoveredQuotaScopes([]corev1.ScopedResourceSelectorRequirement, []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return []corev1.ScopedResourceSelectorRequirement{}, nil
}

func (*serviceEvaluator) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	return quota.Intersection(input, serviceResources)
}

// Usage is one Service; a NodePort or LoadBalancer Service's ports are node
// ports (only those with an explicit nodePort when a load balancer
// allocates none), a LoadBalancer Service is a load balancer.
func (*serviceEvaluator) Usage(item runtime.Object) (corev1.ResourceList, error) {
	typ, ports, explicit, allocate, err := serviceSpec(item)
	if err != nil {
		return nil, err
	}
	one := *resource.NewQuantity(1, resource.DecimalSI)
	result := corev1.ResourceList{
		serviceResources[0]:                  one,
		corev1.ResourceServices:              one,
		corev1.ResourceServicesLoadBalancers: resource.Quantity{Format: resource.DecimalSI},
		corev1.ResourceServicesNodePorts:     resource.Quantity{Format: resource.DecimalSI},
	}
	switch typ {
	case corev1.ServiceTypeNodePort:
		result[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(int64(ports), resource.DecimalSI)
	case corev1.ServiceTypeLoadBalancer:
		n := ports
		if !allocate {
			n = explicit
		}
		result[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(int64(n), resource.DecimalSI)
		result[corev1.ResourceServicesLoadBalancers] = one
	}
	return result, nil
}

func (e *serviceEvaluator) UsageStats(options quota.UsageStatsOptions) (quota.UsageStats, error) {
	return generic.CalculateUsageStats(options, e.list, generic.MatchesNoScopeFunc, e.Usage)
}

// serviceSpec reads what the usage of a Service depends on: its type, its
// number of ports, of ports with an explicit nodePort, and whether a
// load balancer allocates node ports.
func serviceSpec(item runtime.Object) (typ corev1.ServiceType, ports, explicit int, allocate bool, err error) {
	allocate = true
	switch s := item.(type) {
	case *corev1.Service:
		for _, p := range s.Spec.Ports {
			if p.NodePort != 0 {
				explicit++
			}
		}
		if s.Spec.AllocateLoadBalancerNodePorts != nil {
			allocate = *s.Spec.AllocateLoadBalancerNodePorts
		}
		return s.Spec.Type, len(s.Spec.Ports), explicit, allocate, nil
	case *api.Service:
		for _, p := range s.Spec.Ports {
			if p.NodePort != 0 {
				explicit++
			}
		}
		if s.Spec.AllocateLoadBalancerNodePorts != nil {
			allocate = *s.Spec.AllocateLoadBalancerNodePorts
		}
		return corev1.ServiceType(s.Spec.Type), len(s.Spec.Ports), explicit, allocate, nil
	case *unstructured.Unstructured:
		var svc corev1.Service
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(s.Object, &svc); err != nil {
			return "", 0, 0, false, fmt.Errorf("reading Service %s/%s: %w", s.GetNamespace(), s.GetName(), err)
		}
		return serviceSpec(&svc)
	}
	return "", 0, 0, false, fmt.Errorf("not a Service: %T", item)
}
