package federatedtypes

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// pruneService keeps the member's own allocations: cluster IPs, node ports,
// health check port and IP families.
func pruneService(obj *unstructured.Unstructured) {
	for _, f := range []string{"clusterIP", "clusterIPs", "healthCheckNodePort", "ipFamilies", "ipFamilyPolicy"} {
		unstructured.RemoveNestedField(obj.Object, "spec", f)
	}
	ports, _, _ := unstructured.NestedSlice(obj.Object, "spec", "ports")
	for _, p := range ports {
		if m, ok := p.(map[string]any); ok {
			delete(m, "nodePort")
		}
	}
	if ports != nil {
		_ = unstructured.SetNestedSlice(obj.Object, ports, "spec", "ports")
	}
}

// jobControllerLabels are the labels the apiserver generates for a Job's
// selector from its uid: each member generates its own.
var jobControllerLabels = []string{"controller-uid", "job-name", "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name"}

// pruneJob drops the federation-generated selector and pod labels unless
// the user chose the selector (spec.manualSelector).
func pruneJob(obj *unstructured.Unstructured) {
	if manual, _, _ := unstructured.NestedBool(obj.Object, "spec", "manualSelector"); manual {
		return
	}
	unstructured.RemoveNestedField(obj.Object, "spec", "selector")
	for _, l := range jobControllerLabels {
		unstructured.RemoveNestedField(obj.Object, "spec", "template", "metadata", "labels", l)
	}
}
