package federatedtypes

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Type says how one federated type is served and propagated.
type Type struct {
	// Name of the propagation controller in --controllers, such as "configmaps".
	Name string
	// Resource and Kind of the type, the same at the federation and in members.
	Resource schema.GroupVersionResource
	Kind     string
	// Served are the group/versions the federation apiserver serves the
	// resource under, besides Resource's own (v1-era extensions/v1beta1,
	// autoscaling/v1).
	Served []schema.GroupVersion
	// Namespaced types are only placed where their namespace is.
	Namespaced bool
	// Namespace is the Namespace type itself: its copies are marked as
	// the federation's (created-by, or adopted-by when adopted: members
	// let the federation write only in those), deleting one waits for
	// what the member holds in it, and every member's own default is
	// shared: placed, never written.
	Namespace bool
	// RBAC types (Roles, RoleBindings) are written in a member only
	// through the federation's RBAC rights in the copy's namespace, a
	// RoleBinding it makes there first (package memberrbac).
	RBAC bool
	// Shaped types have a status their members write and no generation
	// (Kubernetes sets metadata.generation on neither): what a write left
	// is remembered by its shape, which needs the member's whole answer.
	Shaped bool
	// MemberMade names the object of the type every member makes by
	// itself in every namespace (kube-root-ca.crt, default): it does not
	// keep a namespace from being deleted.
	MemberMade string
	// AdoptsMemberMade: the federated object of MemberMade's name takes
	// over the member's own in the namespaces the federation created
	// there (it was made for the federation's namespace; a federated
	// ServiceAccount default configures it).
	AdoptsMemberMade bool
	// Finalized types are held at deletion by the controller's finalizer,
	// as Namespaces are, because their storage records no tombstones
	// (CustomResourceDefinitions).
	Finalized bool
	// DropsFinalizer types were Finalized and now record their deletions
	// in tombstones (custom resources): our finalizer on an object made
	// before comes off at its next reconcile, else its deletion would
	// still wait for it.
	DropsFinalizer bool
	// Withdrawn, when set, reports whether the type's definition is being
	// deleted (a CRD): its objects then go with it without tombstones, so
	// the copies of ours in cluster whose object is gone are let go as a
	// deleted object's are: deleted, or given back to their members when
	// keep (the definition has the orphan finalizer, which a CRD's first
	// delete never adds, as on a cluster, but a second may). Not where the
	// definition's own copy is deleted: it takes them with it.
	Withdrawn func(cluster string) (withdrawn, keep bool)
	// Dependents, when set, names what still depends on an object being
	// deleted (the member copies of a CRD's custom resources being let
	// go), "" when nothing: the object's copies and finalizer wait for it,
	// at most DeletionWait.
	Dependents func(fed *unstructured.Unstructured) string
	// Fields are the top-level fields that travel besides metadata, such as
	// "spec" or "data".
	Fields []string
	// Prune removes from a copy of the federated object what must not travel
	// inside Fields (member-allocated or federation-generated values).
	Prune func(obj *unstructured.Unstructured)
	// Defaults adds to the copy sent to members what they get unless the
	// federated object says otherwise (a namespace's Pod Security labels).
	// It runs on the copy before its hash, so that the hash covers it.
	Defaults func(obj *unstructured.Unstructured)
	// Status computes the federated object's status, and annotations to
	// set on it, from its members' copies; nil when the type brings nothing
	// back. The status replaces the federated object's whole status.
	Status func(members []Member) (status map[string]any, annotations map[string]string)
	// Settle adjusts the status computed from the members to the current
	// one where the federation apiserver refuses to go back (a Job's
	// counters, startTime, completion), for example while a member is away.
	Settle func(current, status map[string]any)
	// Complete finishes the status computed from the members with what the
	// federated object itself says (a quota's hard limits) and whether
	// every selected member holds its current version (all: a claim is
	// Bound only then).
	Complete func(fed *unstructured.Unstructured, status map[string]any, all bool)
	// StatusTampered reports a status that differs from what Complete
	// writes from the object itself (a quota's hard limits patched through
	// /status): such an update is reconciled at once, not at the next
	// member event or resync. The federation's own writes never differ.
	StatusTampered func(fed *unstructured.Unstructured) bool
	// Endpoints asks for Member.ReadyEndpoints to be filled (Services).
	Endpoints bool
	// ObservedGeneration sets status.observedGeneration to the federated
	// object's generation once every selected member holds and observed it,
	// so that `kubectl rollout status` waits for every member.
	ObservedGeneration bool
	// Replicas divides the type's replica counts over the clusters with the
	// planner (workloads); nil for types copied whole to every cluster.
	Replicas *ReplicaFields
	// Pods says where copies make or select pods, which the federation
	// marks so that a copy reaches only its own (podmarks.go); nil for
	// types that do neither.
	Pods *PodMarks
	// DividesHPA divides an HPA's min/max over the clusters that run its
	// target, and marks the target so that members own its replica count.
	DividesHPA bool
	// Conditions sets the Propagated condition in status.conditions, which
	// says which members failed: types whose status has conditions of free
	// types (apps/v1, Service, HorizontalPodAutoscaler). Not Job: its
	// conditions drive the job controller, and kubectl reads them.
	Conditions bool
}

// ReplicaFields say how a workload type is divided over clusters.
type ReplicaFields struct {
	// Annotation holds the replica allocation preferences.
	Annotation string
	// Fields of spec that are divided; the first is also bounded by the
	// clusters' capacity (pods that stay unschedulable).
	Fields []string
	// Fixed fields are divided once and then kept, because members cannot
	// change them (a Job's completions).
	Fixed map[string]bool
	// Whole reports an object that must not be divided (an Indexed Job,
	// whose every copy would run the same indexes): it goes whole, every
	// field, to one cluster; nil when every object of the type is divided.
	Whole func(obj *unstructured.Unstructured) bool
}

// Member is one member cluster's copy of a federated object.
type Member struct {
	// Cluster is the member cluster's name.
	Cluster string
	// Object is the member's copy.
	Object *unstructured.Unstructured
	// ReadyEndpoints reports whether a Service has ready endpoints there.
	ReadyEndpoints bool
}

// MetadataOnly reports whether only the metadata of member copies is
// read: nothing comes back from them (no status, no replicas), and whether
// a copy is in sync is told by our hash, labels and version.
func (t *Type) MetadataOnly() bool {
	return t.Status == nil && t.Replicas == nil && !t.DividesHPA && !t.Endpoints
}

// ServedVersions are every group/version the resource is served under, its
// own first.
func (t *Type) ServedVersions() []schema.GroupVersion {
	return append([]schema.GroupVersion{t.Resource.GroupVersion()}, t.Served...)
}
