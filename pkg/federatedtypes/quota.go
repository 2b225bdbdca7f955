package federatedtypes

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
)

// QuotaLegacyNames are the quota resource names older than count/<resource>
// that the federation counts itself, by the core resource they count: what
// Kubernetes' own evaluators count under these names (a Service's
// load balancers and node ports with the Service).
var QuotaLegacyNames = map[string][]string{
	"configmaps":             {"configmaps"},
	"secrets":                {"secrets"},
	"services":               {"services", "services.loadbalancers", "services.nodeports"},
	"persistentvolumeclaims": {"persistentvolumeclaims"},
	"resourcequotas":         {"resourcequotas"},
}

// QuotaCountName is the quota resource name of the number of objects of gr,
// count/<resource>[.<group>] (Kubernetes'
// generic.ObjectCountQuotaResourceNameFor).
func QuotaCountName(gr schema.GroupResource) string {
	if gr.Group == "" {
		return "count/" + gr.Resource
	}
	return "count/" + gr.Resource + "." + gr.Group
}

// QuotaCounted reports whether the federation counts itself, of its own
// objects, the usage of a ResourceQuota's resource name, and enforces it at
// its apiserver (the ResourceQuota admission plugin): the object counts of
// the namespaced federated types (QuotaCountedNames). Every other resource
// of a quota (compute resources, storage requests, Pods, custom resources)
// is counted by the members, each enforcing the whole quota on its own
// copies; the federation reports their sum.
func QuotaCounted(name string) bool {
	return quotaCounted.Has(name)
}

// QuotaCountedNames are the names QuotaCounted reports.
func QuotaCountedNames() sets.Set[string] {
	return quotaCounted.Clone()
}

// quotaCounted is made at init: the status functions of All use it.
var quotaCounted sets.Set[string]

func init() {
	quotaCounted = sets.New[string]()
	for _, t := range All {
		if !t.Namespaced {
			continue
		}
		quotaCounted.Insert(QuotaCountName(t.Resource.GroupResource()))
		if t.Resource.Group == "" {
			quotaCounted.Insert(QuotaLegacyNames[t.Resource.Resource]...)
		}
	}
}
