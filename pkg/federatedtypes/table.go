package federatedtypes

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

// extensions is the v1-era group that serves apps and networking resources.
var extensions = schema.GroupVersion{Group: "extensions", Version: "v1beta1"}

// All are the federated types, namespaces first.
var All = []*Type{
	{Name: "namespaces", Resource: gvr("", "v1", "namespaces"), Kind: "Namespace", Namespace: true, Defaults: defaultNamespace},
	{Name: "configmaps", Resource: gvr("", "v1", "configmaps"), Kind: "ConfigMap", Namespaced: true,
		Fields: []string{"data", "binaryData", "immutable"}, MemberMade: rootCAConfigMap},
	{Name: "secrets", Resource: gvr("", "v1", "secrets"), Kind: "Secret", Namespaced: true,
		Fields: []string{"data", "type", "immutable"}},
	{Name: "services", Resource: gvr("", "v1", "services"), Kind: "Service", Namespaced: true,
		Fields: []string{"spec"}, Prune: pruneService, Status: serviceStatus, Endpoints: true, Conditions: true, Shaped: true,
		Pods: &PodMarks{MapSelector: []string{"spec", "selector"}}},
	{Name: "deployments", Resource: gvr("apps", "v1", "deployments"), Kind: "Deployment", Namespaced: true,
		Served: []schema.GroupVersion{extensions},
		Fields: []string{"spec"}, Prune: pruneDeployment, Status: deploymentStatus, ObservedGeneration: true, Conditions: true, Pods: workloadPods,
		Replicas: &ReplicaFields{Annotation: federationv1beta1.DeploymentPreferencesAnnotation, Fields: []string{"replicas"}}},
	{Name: "replicasets", Resource: gvr("apps", "v1", "replicasets"), Kind: "ReplicaSet", Namespaced: true,
		Served: []schema.GroupVersion{extensions},
		Fields: []string{"spec"}, Status: replicaSetStatus, ObservedGeneration: true, Conditions: true, Pods: workloadPods,
		Replicas: &ReplicaFields{Annotation: federationv1beta1.ReplicaSetPreferencesAnnotation, Fields: []string{"replicas"}}},
	{Name: "daemonsets", Resource: gvr("apps", "v1", "daemonsets"), Kind: "DaemonSet", Namespaced: true,
		Served: []schema.GroupVersion{extensions},
		Fields: []string{"spec"}, Status: daemonSetStatus, ObservedGeneration: true, Conditions: true, Pods: workloadPods},
	{Name: "ingresses", Resource: gvr("networking.k8s.io", "v1", "ingresses"), Kind: "Ingress", Namespaced: true,
		Served: []schema.GroupVersion{extensions},
		Fields: []string{"spec"}, Status: ingressStatus},
	{Name: "jobs", Resource: gvr("batch", "v1", "jobs"), Kind: "Job", Namespaced: true,
		Fields: []string{"spec"}, Prune: pruneJob, Status: jobStatus, Settle: settleJob, Complete: completeJob,
		// (A Job's selector is there only with manualSelector.)
		Pods: &PodMarks{Templates: podTemplate, Selectors: podSelector, FixedSelectors: true, FixedTemplates: true},
		Replicas: &ReplicaFields{Annotation: federationv1beta1.JobPreferencesAnnotation, Fields: []string{"parallelism", "completions"},
			Fixed: map[string]bool{"completions": true}, Whole: IndexedJob}},
	{Name: "horizontalpodautoscalers", Resource: gvr("autoscaling", "v2", "horizontalpodautoscalers"), Kind: "HorizontalPodAutoscaler",
		Served:     []schema.GroupVersion{{Group: "autoscaling", Version: "v1"}},
		Namespaced: true, Fields: []string{"spec"}, Status: hpaStatus, Conditions: true, DividesHPA: true, Shaped: true},
	// A member's own secrets and imagePullSecrets stay: secrets merge by
	// name; imagePullSecrets is atomic, so the federation's list, when it
	// has one, is the copy's.
	{Name: "serviceaccounts", Resource: gvr("", "v1", "serviceaccounts"), Kind: "ServiceAccount", Namespaced: true,
		Fields: []string{"secrets", "imagePullSecrets", "automountServiceAccountToken"}, MemberMade: "default", AdoptsMemberMade: true},
	{Name: "statefulsets", Resource: gvr("apps", "v1", "statefulsets"), Kind: "StatefulSet", Namespaced: true,
		Fields: []string{"spec"}, Status: statefulSetStatus, ObservedGeneration: true, Conditions: true,
		Pods:     &PodMarks{Templates: podTemplate, Selectors: podSelector, Claims: true, FixedSelectors: true},
		Replicas: &ReplicaFields{Annotation: federationv1beta1.StatefulSetPreferencesAnnotation, Fields: []string{"replicas"}}},
	{Name: "cronjobs", Resource: gvr("batch", "v1", "cronjobs"), Kind: "CronJob", Namespaced: true,
		Fields: []string{"spec"}, Status: cronJobStatus,
		Pods: &PodMarks{Templates: [][]string{{"spec", "jobTemplate", "spec", "template"}}, Selectors: [][]string{{"spec", "jobTemplate", "spec", "selector"}}}},
	{Name: "poddisruptionbudgets", Resource: gvr("policy", "v1", "poddisruptionbudgets"), Kind: "PodDisruptionBudget", Namespaced: true,
		Fields: []string{"spec"}, Status: podDisruptionBudgetStatus, ObservedGeneration: true, Conditions: true,
		Pods: &PodMarks{Selectors: podSelector}},
	{Name: "networkpolicies", Resource: gvr("networking.k8s.io", "v1", "networkpolicies"), Kind: "NetworkPolicy", Namespaced: true,
		Fields: []string{"spec"}, Pods: &PodMarks{Selectors: [][]string{{"spec", "podSelector"}}}},
	// What members fill in (volumeName, a default storageClassName) never
	// travels, so it is no drift.
	{Name: "persistentvolumeclaims", Resource: gvr("", "v1", "persistentvolumeclaims"), Kind: "PersistentVolumeClaim", Namespaced: true,
		Fields: []string{"spec"}, Status: claimStatus, Complete: completeClaim, Shaped: true},
	{Name: "limitranges", Resource: gvr("", "v1", "limitranges"), Kind: "LimitRange", Namespaced: true,
		Fields: []string{"spec"}},
	{Name: "resourcequotas", Resource: gvr("", "v1", "resourcequotas"), Kind: "ResourceQuota", Namespaced: true,
		Fields: []string{"spec"}, Status: resourceQuotaStatus, Complete: completeQuota,
		StatusTampered: quotaHardTampered, Shaped: true},
	// Served in the RBAC group the federation authorizes with (rbacstores.go
	// in pkg/apiserver); what members accept of them is bounded by package
	// memberrbac.
	{Name: "roles", Resource: gvr("rbac.authorization.k8s.io", "v1", "roles"), Kind: "Role", Namespaced: true,
		Fields: []string{"rules"}, RBAC: true},
	{Name: "rolebindings", Resource: gvr("rbac.authorization.k8s.io", "v1", "rolebindings"), Kind: "RoleBinding", Namespaced: true,
		Fields: []string{"subjects", "roleRef"}, RBAC: true},
}

// The pod template and selector of most workloads, whose selector cannot
// change once they exist.
var (
	podTemplate  = [][]string{{"spec", "template"}}
	podSelector  = [][]string{{"spec", "selector"}}
	workloadPods = &PodMarks{Templates: podTemplate, Selectors: podSelector, FixedSelectors: true}
)

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

// DefaultNeverPropagatedNamespaces are the namespaces whose objects are
// never propagated, and whose federated Namespaces neither: the
// federation's own (member credentials) and the members' system
// namespaces, where a copy would run with the rights of a cluster's own
// components. The controller manager's --never-propagated-namespaces
// overrides the list for its controllers; the apiserver uses it as it is.
var DefaultNeverPropagatedNamespaces = []string{
	federationv1beta1.SystemNamespace, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease,
}

// NeverPropagatedNamespaces returns namespaces as a set, with the
// federation's own always in it.
func NeverPropagatedNamespaces(namespaces []string) sets.Set[string] {
	return sets.New(namespaces...).Insert(federationv1beta1.SystemNamespace)
}

// NeverPropagatedIn returns the namespace among namespaces that keeps the
// object ns/name of resource gr from being propagated: its own (a
// Namespace's is its name), if listed.
func NeverPropagatedIn(namespaces sets.Set[string], gr schema.GroupResource, ns, name string) (string, bool) {
	if gr == Namespaces.Resource.GroupResource() {
		ns = name
	}
	return ns, ns != "" && namespaces.Has(ns)
}

// defaultNeverPropagated is the set of DefaultNeverPropagatedNamespaces.
var defaultNeverPropagated = NeverPropagatedNamespaces(DefaultNeverPropagatedNamespaces)

// NeverPropagated reports whether the object ns/name of resource gr is
// never propagated with the default list: it is in, or is, one of
// DefaultNeverPropagatedNamespaces.
func NeverPropagated(gr schema.GroupResource, ns, name string) bool {
	_, never := NeverPropagatedIn(defaultNeverPropagated, gr, ns, name)
	return never
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

// ServedAs returns the federated type a request's resource is, under any
// group it is served in (deployments.extensions is Deployments), or nil.
func ServedAs(gr schema.GroupResource) *Type {
	for _, t := range All {
		if t.Resource.Resource != gr.Resource {
			continue
		}
		for _, gv := range t.ServedVersions() {
			if gv.Group == gr.Group {
				return t
			}
		}
	}
	return nil
}

// MemberMade reports whether a member object of resource r named name is
// one every member makes by itself in every namespace (Type.MemberMade).
func MemberMade(r schema.GroupResource, name string) bool {
	for _, t := range All {
		if t.MemberMade != "" && t.Resource.GroupResource() == r {
			return t.MemberMade == name
		}
	}
	return false
}
