package federatedtypes

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

// extensions is the v1-era group that serves apps and networking resources.
var extensions = schema.GroupVersion{Group: "extensions", Version: "v1beta1"}

// All are the federated types, namespaces first.
var All = []*Type{
	{Name: "namespaces", Resource: gvr("", "v1", "namespaces"), Kind: "Namespace"},
	{Name: "configmaps", Resource: gvr("", "v1", "configmaps"), Kind: "ConfigMap", Namespaced: true,
		Fields: []string{"data", "binaryData", "immutable"}},
	{Name: "secrets", Resource: gvr("", "v1", "secrets"), Kind: "Secret", Namespaced: true,
		Fields: []string{"data", "type", "immutable"}},
	{Name: "services", Resource: gvr("", "v1", "services"), Kind: "Service", Namespaced: true,
		Fields: []string{"spec"}, Prune: pruneService, Status: serviceStatus, Endpoints: true, Conditions: true},
	{Name: "deployments", Resource: gvr("apps", "v1", "deployments"), Kind: "Deployment", Namespaced: true,
		Served: []schema.GroupVersion{extensions},
		Fields: []string{"spec"}, Status: deploymentStatus, ObservedGeneration: true, Conditions: true,
		Replicas: &ReplicaFields{Annotation: federationv1beta1.DeploymentPreferencesAnnotation, Fields: []string{"replicas"}}},
	{Name: "replicasets", Resource: gvr("apps", "v1", "replicasets"), Kind: "ReplicaSet", Namespaced: true,
		Served: []schema.GroupVersion{extensions},
		Fields: []string{"spec"}, Status: replicaSetStatus, ObservedGeneration: true, Conditions: true,
		Replicas: &ReplicaFields{Annotation: federationv1beta1.ReplicaSetPreferencesAnnotation, Fields: []string{"replicas"}}},
	{Name: "daemonsets", Resource: gvr("apps", "v1", "daemonsets"), Kind: "DaemonSet", Namespaced: true,
		Served: []schema.GroupVersion{extensions},
		Fields: []string{"spec"}, Status: daemonSetStatus, ObservedGeneration: true, Conditions: true},
	{Name: "ingresses", Resource: gvr("networking.k8s.io", "v1", "ingresses"), Kind: "Ingress", Namespaced: true,
		Served: []schema.GroupVersion{extensions},
		Fields: []string{"spec"}, Status: ingressStatus},
	{Name: "jobs", Resource: gvr("batch", "v1", "jobs"), Kind: "Job", Namespaced: true,
		Fields: []string{"spec"}, Prune: pruneJob, Status: jobStatus, Settle: settleJob,
		Replicas: &ReplicaFields{Annotation: federationv1beta1.JobPreferencesAnnotation, Fields: []string{"parallelism", "completions"},
			Fixed: map[string]bool{"completions": true}, FixedTemplate: true}},
	{Name: "horizontalpodautoscalers", Resource: gvr("autoscaling", "v2", "horizontalpodautoscalers"), Kind: "HorizontalPodAutoscaler",
		Served:     []schema.GroupVersion{{Group: "autoscaling", Version: "v1"}},
		Namespaced: true, Fields: []string{"spec"}, Status: hpaStatus, Conditions: true, DividesHPA: true},
}

// Namespaces is the type of federated namespaces, whose presence in a
// member decides where the namespaced types are placed.
var Namespaces = All[0]

// Resources are the group-resources of the federated types.
func Resources() []schema.GroupResource {
	grs := make([]schema.GroupResource, 0, len(All))
	for _, t := range All {
		grs = append(grs, t.Resource.GroupResource())
	}
	return grs
}

// NeverPropagated reports whether the object ns/name of resource gr is the
// federation's own: its namespace, and everything in it (cluster credentials).
func NeverPropagated(gr schema.GroupResource, ns, name string) bool {
	return ns == federationv1beta1.SystemNamespace ||
		(gr == Namespaces.Resource.GroupResource() && name == federationv1beta1.SystemNamespace)
}

// ByName returns the federated type of a controller name ("configmaps"),
// or nil.
func ByName(name string) *Type {
	for _, t := range All {
		if t.Name == name {
			return t
		}
	}
	return nil
}
