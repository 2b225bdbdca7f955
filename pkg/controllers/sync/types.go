package sync

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/federation-v1/federation/pkg/replicapreferences"
)

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

// Adapters are the federated types, namespaces first.
var Adapters = []*Adapter{
	{Name: "namespaces", Resource: gvr("", "v1", "namespaces"), Kind: "Namespace"},
	{Name: "configmaps", Resource: gvr("", "v1", "configmaps"), Kind: "ConfigMap", Namespaced: true,
		Fields: []string{"data", "binaryData", "immutable"}},
	{Name: "secrets", Resource: gvr("", "v1", "secrets"), Kind: "Secret", Namespaced: true,
		Fields: []string{"data", "type", "immutable"}},
	{Name: "services", Resource: gvr("", "v1", "services"), Kind: "Service", Namespaced: true,
		Fields: []string{"spec"}, Prune: pruneService, Status: serviceStatus, Endpoints: true, Conditions: true},
	{Name: "deployments", Resource: gvr("apps", "v1", "deployments"), Kind: "Deployment", Namespaced: true,
		Fields: []string{"spec"}, Status: deploymentStatus, ObservedGeneration: true, Conditions: true,
		Replicas: &ReplicaFields{Annotation: replicapreferences.DeploymentAnnotation, Fields: []string{"replicas"}}},
	{Name: "replicasets", Resource: gvr("apps", "v1", "replicasets"), Kind: "ReplicaSet", Namespaced: true,
		Fields: []string{"spec"}, Status: replicaSetStatus, ObservedGeneration: true, Conditions: true,
		Replicas: &ReplicaFields{Annotation: replicapreferences.ReplicaSetAnnotation, Fields: []string{"replicas"}}},
	{Name: "daemonsets", Resource: gvr("apps", "v1", "daemonsets"), Kind: "DaemonSet", Namespaced: true,
		Fields: []string{"spec"}, Status: daemonSetStatus, ObservedGeneration: true, Conditions: true},
	{Name: "ingresses", Resource: gvr("networking.k8s.io", "v1", "ingresses"), Kind: "Ingress", Namespaced: true,
		Fields: []string{"spec"}, Status: ingressStatus},
	{Name: "jobs", Resource: gvr("batch", "v1", "jobs"), Kind: "Job", Namespaced: true,
		Fields: []string{"spec"}, Prune: pruneJob, Status: jobStatus, Settle: settleJob,
		Replicas: &ReplicaFields{Annotation: replicapreferences.JobAnnotation, Fields: []string{"parallelism", "completions"},
			Fixed: map[string]bool{"completions": true}, FixedTemplate: true}},
	{Name: "horizontalpodautoscalers", Resource: gvr("autoscaling", "v2", "horizontalpodautoscalers"), Kind: "HorizontalPodAutoscaler",
		Namespaced: true, Fields: []string{"spec"}, Status: hpaStatus, Conditions: true, DividesHPA: true},
}

// FederatedResources are the group-resources of the federated types.
func FederatedResources() []schema.GroupResource {
	grs := make([]schema.GroupResource, 0, len(Adapters))
	for _, a := range Adapters {
		grs = append(grs, a.Resource.GroupResource())
	}
	return grs
}

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
