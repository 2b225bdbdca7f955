package v1beta1

// The names the federation's API gives meaning to, besides its types: its
// own namespace, the label and annotations on federated objects and their
// member copies, and the finalizer. Every package takes them from here.

// SystemNamespace holds the federation's own objects (the members'
// credentials Secrets among them), in the federation and in each member.
// Nothing in it is ever propagated.
const SystemNamespace = "federation-system"

// FederationLabel on a member copy (and on the pods of a divided workload)
// names the federation that wrote it; the controller manager watches
// members only through this label.
const FederationLabel = "federation.kubernetes.io/federation-name"

// FinalizerDeleteFromUnderlyingClusters holds a federated object (a
// ConfigMap, Deployment, Namespace, …) until the federation controller
// manager has deleted or orphaned its copies in the member clusters.
const FinalizerDeleteFromUnderlyingClusters = "federation.kubernetes.io/delete-from-underlying-clusters"

// TombstoneLabel marks a tombstone: a ConfigMap in SystemNamespace that the
// federation apiserver writes as it deletes a federated object (other than
// a Namespace), so that the controller manager deletes its member copies
// afterwards. Its value is the object's resource.group ("deployments.apps").
const TombstoneLabel = "federation.kubernetes.io/tombstone"

// Annotations written by the controller manager.
const (
	// AppliedHashAnnotation on a member copy holds the hash of what the
	// federation last applied to it.
	AppliedHashAnnotation = "federation.kubernetes.io/applied-hash"
	// ObjectUIDAnnotation on a member copy holds the UID of the federated
	// object it is a copy of: a tombstone deletes only the copies of the
	// object it records, never those of a later object of the same name
	// (as after restoring a backup older than that object).
	ObjectUIDAnnotation = "federation.kubernetes.io/object-uid"
	// ReplicaPlanAnnotation on a federated workload holds the current plan:
	// per divided field, the count each Ready cluster runs, such as
	// {"replicas":{"cluster1":3,"cluster2":3}}.
	ReplicaPlanAnnotation = "federation.kubernetes.io/replica-plan"
	// HPATargetClustersAnnotation on a federated Deployment or ReplicaSet
	// lists the clusters, {"Names":["c1"]}, whose own HPA owns the replica
	// count: the federation leaves spec.replicas there to the member.
	HPATargetClustersAnnotation = "federation.kubernetes.io/hpa-target-cluster-list"
	// ServiceIngressesAnnotation lists a federated Service's load-balancer
	// addresses per cluster (package serviceingresses reads and writes it).
	ServiceIngressesAnnotation = "federation.kubernetes.io/service-ingresses"
	// MemberQuotaUsageAnnotation on a federated ResourceQuota holds each
	// member's own usage of the resources the members count,
	// {"cluster1":{"pods":"3","requests.cpu":"500m"}}; status.used holds
	// the largest of them.
	MemberQuotaUsageAnnotation = "federation.kubernetes.io/member-quota-usage"
)

// LocalLabel ("true") on a federated object keeps it at the federation:
// it is never propagated, and copies made before it was set are removed as
// from clusters that no longer select it. The federation's own bookkeeping
// carries it (the ReplicaSets of a Deployment's revision history).
const LocalLabel = "federation.kubernetes.io/local"

// Annotations written by users (v1's names).
const (
	// ClusterSelectorAnnotation chooses the clusters of an object by their
	// labels (package clusterselector).
	ClusterSelectorAnnotation = "federation.alpha.kubernetes.io/cluster-selector"
	// ReplicaSetPreferencesAnnotation, DeploymentPreferencesAnnotation,
	// JobPreferencesAnnotation and StatefulSetPreferencesAnnotation hold a
	// workload's replica allocation preferences (package
	// replicapreferences).
	ReplicaSetPreferencesAnnotation  = "federation.kubernetes.io/replica-set-preferences"
	DeploymentPreferencesAnnotation  = "federation.kubernetes.io/deployment-preferences"
	JobPreferencesAnnotation         = "federation.kubernetes.io/job-preferences"
	StatefulSetPreferencesAnnotation = "federation.kubernetes.io/stateful-set-preferences"
	// OverridesAnnotation holds per-cluster overrides: an ordered list of
	// rules that change the copy sent to the clusters they choose
	// (package overrides). It stays at the federation.
	OverridesAnnotation = "federation.kubernetes.io/overrides"
)

// Identities of the federation's own components at the federation
// apiserver, bound to their ClusterRoles by the server's bootstrap policy.
const (
	// ControllerManagerUser is the user name of federation-controller-manager.
	ControllerManagerUser = "system:federation-controller-manager"
)

// DNSConfigMap in SystemNamespace publishes the federation's DNS zone and
// the address of its DNS server, so that `kubefed join` can point a
// member's cluster DNS at them. The leading controller manager writes it
// from its DNS provider config (kubefed init --local writes the same).
const (
	DNSConfigMap = "federation-dns"
	DNSZoneKey   = "zone"
	DNSServerKey = "server"
)

// Ownership of member copies (which federation made a copy, whether it
// was adopted, and whether adoption is asked for).
const (
	// FederationUIDLabel on a member copy holds the UID of the federation
	// that wrote it: the UID of its federation-system namespace at the
	// federation apiserver, made when the federation was initialized. Two
	// federations of the same name joined to one member differ by it.
	FederationUIDLabel = "federation.kubernetes.io/federation-uid"
	// AdoptedAnnotation ("true") on a member copy says the object existed
	// in the member before the federation took it over: deleting the
	// federated object leaves it to the member (orphaned) instead of
	// deleting it.
	AdoptedAnnotation = "federation.kubernetes.io/adopted"
	// ConflictResolutionAnnotation on a federated object says what to do
	// with a member object of the same name that this federation did not
	// create: "abort" (the default: leave it, report the conflict) or
	// "adopt" (take it over, as Federation v1 did).
	ConflictResolutionAnnotation = "federation.kubernetes.io/conflict-resolution"
	// DeleteAdoptedAnnotation ("true") on a federated object asks that its
	// deletion delete adopted copies too.
	DeleteAdoptedAnnotation = "federation.kubernetes.io/delete-adopted-copies"
	// AdoptionSubresource is the virtual subresource, <resource>/federation-adoption,
	// on which setting ConflictResolutionAnnotation to "adopt" or
	// DeleteAdoptedAnnotation to "true" needs the verb update: they take
	// over or delete member objects the federation did not create, more
	// than the right to write the federated object gives. No built-in
	// role but cluster-admin grants it.
	AdoptionSubresource = "federation-adoption"
)

// Values of ConflictResolutionAnnotation.
const (
	ConflictResolutionAbort = "abort"
	ConflictResolutionAdopt = "adopt"
)
