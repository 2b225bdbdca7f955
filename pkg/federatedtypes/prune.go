package federatedtypes

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// pruneService keeps the member's own allocations: cluster IPs, node ports,
// health check port and IP families. A headless Service's "None" is no
// allocation but its kind, and stays.
func pruneService(obj *unstructured.Unstructured) {
	headless, _, _ := unstructured.NestedString(obj.Object, "spec", "clusterIP")
	for _, f := range []string{"clusterIP", "clusterIPs", "healthCheckNodePort", "ipFamilies", "ipFamilyPolicy"} {
		unstructured.RemoveNestedField(obj.Object, "spec", f)
	}
	if headless == corev1.ClusterIPNone {
		_ = unstructured.SetNestedField(obj.Object, corev1.ClusterIPNone, "spec", "clusterIP")
		_ = unstructured.SetNestedStringSlice(obj.Object, []string{corev1.ClusterIPNone}, "spec", "clusterIPs")
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

// deploymentRevisionAnnotations are what the federation's revision history
// writes on a federated Deployment (its current revision) and what the
// v1beta1 rollback subresource sets (the revision to go back to). Each
// member's deployment controller owns both on its own copy: sent, they
// would overwrite each other for ever (a member rolls back and clears the
// annotation, the federation sends it again).
var deploymentRevisionAnnotations = []string{"deployment.kubernetes.io/revision", "deprecated.deployment.rollback.to"}

// pruneDeployment keeps the revision and rollback annotations at the
// federation.
func pruneDeployment(obj *unstructured.Unstructured) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		return
	}
	for _, a := range deploymentRevisionAnnotations {
		delete(annotations, a)
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	obj.SetAnnotations(annotations)
}
