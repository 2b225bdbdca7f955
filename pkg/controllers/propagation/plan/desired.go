package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/memberrbac"
	"github.com/federation-v1/federation/pkg/planner/replicaplan"
)

// notTravelling are the federation's own annotations of the federated
// object, kept from members.
var notTravelling = map[string]bool{
	federationv1beta1.ServiceIngressesAnnotation: true,
	federationv1beta1.AppliedHashAnnotation:      true,
	federationv1beta1.ObjectUIDAnnotation:        true,
	federationv1beta1.ReplicaPlanAnnotation:      true,
	federationv1beta1.MemberQuotaUsageAnnotation: true,
	// Ownership is the federation's to say on each copy (package ownership);
	// how to resolve conflicts is said to the federation, not the members.
	federationv1beta1.AdoptedAnnotation:            true,
	federationv1beta1.ConflictResolutionAnnotation: true,
	federationv1beta1.DeleteAdoptedAnnotation:      true,
	// Applied here, to each cluster's copy (the overrides stage): a rule changed
	// for one cluster rewrites no other.
	federationv1beta1.OverridesAnnotation: true,
}

// Desired returns what is applied to members for fed: name, namespace,
// labels (with the federation's name and, when known, its UID), annotations
// (with fed's UID and the hash) and the type's fields, pruned by the type (which may drop
// labels and annotations too), with the type's defaults; and the hash of it
// without the hash annotation.
func Desired(a *federatedtypes.Type, fed *unstructured.Unstructured, federation, uid string) (*unstructured.Unstructured, string, error) {
	src := fed.DeepCopy()
	if a.Prune != nil {
		a.Prune(src)
	}
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(a.Resource.GroupVersion().String())
	out.SetKind(a.Kind)
	out.SetName(fed.GetName())
	if a.Namespaced {
		out.SetNamespace(fed.GetNamespace())
	}
	labels := map[string]string{}
	for k, v := range src.GetLabels() {
		labels[k] = v
	}
	labels[federationv1beta1.FederationLabel] = federation
	if uid != "" {
		labels[federationv1beta1.FederationUIDLabel] = uid
	}
	out.SetLabels(labels)
	annotations := map[string]string{}
	for k, v := range src.GetAnnotations() {
		if !notTravelling[k] {
			annotations[k] = v
		}
	}
	travellingLastApplied(annotations)
	if objUID := fed.GetUID(); objUID != "" {
		annotations[federationv1beta1.ObjectUIDAnnotation] = string(objUID)
	}
	if len(annotations) > 0 {
		out.SetAnnotations(annotations)
	}
	for _, f := range a.Fields {
		if v, ok := src.Object[f]; ok && v != nil {
			out.Object[f] = v
		}
	}
	if a.Defaults != nil {
		a.Defaults(out)
	}
	if a.Pods != nil {
		// The pods carry the label too (and selectors ask for it): a copy
		// reaches only the federation's pods, and members' unschedulable
		// pods of federated workloads are watched without watching all pods.
		a.Pods.Mark(out, federation)
	}
	hash, err := hash(out)
	if err != nil {
		return nil, "", err
	}
	annotations[federationv1beta1.AppliedHashAnnotation] = hash
	out.SetAnnotations(annotations)
	return out, hash, nil
}

// hash hashes the object's JSON (map keys are sorted by encoding/json).
func hash(u *unstructured.Unstructured) (string, error) {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16]), nil
}

// DesiredFor returns what one cluster is sent of a divided workload: the
// common desired object with the cluster's counts, and its hash. Where the
// member's own HPA owns spec.replicas, memberReplicas is the member's
// current count and is sent back unchanged: the federation follows the
// member. (Leaving the field out instead would make server-side apply
// reset it to the default, since the federation owned it until then.)
func DesiredFor(desired *unstructured.Unstructured, plan replicaplan.Plan, cluster string, memberReplicas *int64) (*unstructured.Unstructured, string, error) {
	out := desired.DeepCopy()
	annotations := out.GetAnnotations()
	delete(annotations, federationv1beta1.AppliedHashAnnotation)
	if len(annotations) == 0 {
		annotations = nil
	}
	out.SetAnnotations(annotations)
	for f, counts := range plan {
		n := counts[cluster]
		if f == "replicas" && memberReplicas != nil {
			n = *memberReplicas
		}
		if err := unstructured.SetNestedField(out.Object, n, "spec", f); err != nil {
			return nil, "", err
		}
	}
	hash, err := hash(out)
	if err != nil {
		return nil, "", err
	}
	annotations = out.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[federationv1beta1.AppliedHashAnnotation] = hash
	out.SetAnnotations(annotations)
	return out, hash, nil
}

// WithAdopted is an object as sent to a member, marked as adopted there,
// and its hash: an adopted copy stays marked on every write.
func WithAdopted(t *federatedtypes.Type, sent *unstructured.Unstructured) (*unstructured.Unstructured, string, error) {
	out := sent.DeepCopy()
	annotations := out.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[federationv1beta1.AdoptedAnnotation] = "true"
	out.SetAnnotations(annotations)
	unmarkCreated(out)
	if t.Namespace {
		// The member's namespace becomes one the federation may write in
		// (the federation writes only in namespaces it created or adopted), and stays so while we apply it.
		labels := out.GetLabels()
		labels[memberrbac.AdoptedByLabel(labels[federationv1beta1.FederationLabel])] = memberrbac.Adopted
		out.SetLabels(labels)
	}
	return DesiredFor(out, nil, "", nil)
}

// unmarkCreated takes the created mark off what is sent to adopt a
// member's namespace, which the federation did not create.
func unmarkCreated(obj *unstructured.Unstructured) {
	if labels := obj.GetLabels(); labels != nil {
		delete(labels, memberrbac.CreatedByLabel)
		obj.SetLabels(labels)
	}
}

// Shared reports whether fed, of type t, is the Namespace every member
// has of its own, default: it is placed (objects in it propagate) but
// never written, owned or deleted in a member.
func Shared(t *federatedtypes.Type, fed metav1.Object) bool {
	return t.Namespace && fed.GetName() == metav1.NamespaceDefault
}

// Unmarked is desired, of type t, without the pod marks that cannot be
// added once an object exists (federatedtypes.PodMarks), hashed again:
// what a member's copy made without them is sent.
func Unmarked(t *federatedtypes.Type, desired *unstructured.Unstructured) (*unstructured.Unstructured, string, error) {
	out := desired.DeepCopy()
	t.Pods.Unmark(out)
	return DesiredFor(out, nil, "", nil)
}
