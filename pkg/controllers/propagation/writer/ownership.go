package writer

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/memberrbac"
	"github.com/federation-v1/federation/pkg/ownership"
)

// Ownership of member objects: see package ownership.

// Event reasons of ownership.
const (
	// ReasonConflict: a member holds an object of the federated object's
	// name that is not ours; it is left alone.
	ReasonConflict = "ConflictInCluster"
	// ReasonOrphan: a copy was left to its member instead of deleted.
	ReasonOrphan = "OrphanInCluster"
)

// ownerOf tells whose a member object is and, for another federation's,
// names that federation.
func (w *Writer) ownerOf(obj metav1.Object) (ownership.Owner, string) {
	return ownership.Of(obj, w.members.Federation(), w.members.FederationUID())
}

// adoptionAsked reports whether the member's own object of fed's name in
// cluster may be taken over: the federated object says so (which took the
// adoption right at admission), or, when it says nothing, the controller
// manager's default.
func (w *Writer) adoptionAsked(cluster string, fed *unstructured.Unstructured) bool {
	if r := fed.GetAnnotations()[federationv1beta1.ConflictResolutionAnnotation]; r != "" {
		return r == federationv1beta1.ConflictResolutionAdopt
	}
	return w.opts.DefaultConflictResolution == federationv1beta1.ConflictResolutionAdopt || w.defaultAccount(cluster, fed)
}

// defaultAccount reports whether fed is a ServiceAccount named default in
// a namespace the federation created in cluster: the member made it for
// the federation's namespace, so a federated one can only mean to
// configure it (imagePullSecrets); it adopts it unless it says abort, and
// gives it back when it is deleted. In a namespace adopted from the member
// (its default, say) the member's pods run as that account: taking it
// over needs the adoption right, as for any other object.
func (w *Writer) defaultAccount(cluster string, fed *unstructured.Unstructured) bool {
	if !w.typ.AdoptsMemberMade || fed.GetName() != w.typ.MemberMade {
		return false
	}
	ns, ok := w.members.Get(cluster, membercluster.NamespacesResource, "", fed.GetNamespace())
	return ok && ns.GetLabels()[memberrbac.CreatedByLabel] == w.members.Federation()
}

// adoptedAtJoin reports whether a member's own namespace was adopted for
// this federation by the member's admin (kubefed join --adopt-namespaces):
// the federated Namespace of its name takes it over without asking.
func (w *Writer) adoptedAtJoin(live metav1.Object) bool {
	return w.typ.Namespace && live.GetLabels()[memberrbac.AdoptedByLabel(w.members.Federation())] == memberrbac.Adopted
}

// deletesAdopted reports whether deleting fed deletes its adopted copies
// too, instead of leaving them to their members.
func deletesAdopted(fed *unstructured.Unstructured) bool {
	return fed.GetAnnotations()[federationv1beta1.DeleteAdoptedAnnotation] == "true"
}

// conflict reports a member object of fed's name that is not ours, and
// returns the error that keeps the copy failed (named in the Propagated
// condition). The Warning event is told once per member object.
func (w *Writer) conflict(cluster string, fed *unstructured.Unstructured, theirs metav1.Object, other string) error {
	objKey := key(fed.GetNamespace(), fed.GetName())
	msg := fmt.Sprintf("%s in cluster %s belongs to federation %s: left as it is", w.what(objKey), cluster, other)
	if other == "" {
		msg = fmt.Sprintf("%s exists in cluster %s and was not created by this federation: left as it is (to adopt it, annotate the federated object %s=%s, "+
			"which takes the right to update %s/%s)",
			w.what(objKey), cluster, federationv1beta1.ConflictResolutionAnnotation, federationv1beta1.ConflictResolutionAdopt,
			w.typ.Resource.Resource, federationv1beta1.AdoptionSubresource)
	}
	return w.tellConflict(cluster, fed, theirs, msg)
}

// memberManaged reports a member object of fed's name that the member's
// own controllers keep up (federatedtypes.ManagedByMember says why): it
// is never adopted, whatever fed asks.
func (w *Writer) memberManaged(cluster string, fed *unstructured.Unstructured, theirs metav1.Object, why string) error {
	objKey := key(fed.GetNamespace(), fed.GetName())
	return w.tellConflict(cluster, fed, theirs, fmt.Sprintf("%s in cluster %s is the member's own and kept up by it (%s): the federation never takes it over",
		w.what(objKey), cluster, why))
}

// tellConflict records a conflict's event once per member object, and
// returns its error.
func (w *Writer) tellConflict(cluster string, fed *unstructured.Unstructured, theirs metav1.Object, msg string) error {
	objKey := key(fed.GetNamespace(), fed.GetName())
	if told, ok := w.conflicts.Swap(appliedKey(cluster, objKey), theirs.GetUID()); !ok || told != theirs.GetUID() {
		w.recorder.Event(fed, corev1.EventTypeWarning, ReasonConflict, msg)
	}
	return fmt.Errorf("%s", msg)
}

// conflictKnown reports whether a conflict was found for the copy of
// objKey in cluster: its next write reads the member first instead of
// trying a create that fails again.
func (w *Writer) conflictKnown(cluster, objKey string) bool {
	_, ok := w.conflicts.Load(appliedKey(cluster, objKey))
	return ok
}

// ForCopy is what cluster is sent of desired (plan.ForCopy), given what
// our cache holds of its copy there, or what our last write left.
func (w *Writer) ForCopy(cluster string, fed, desired *unstructured.Unstructured, hash string) (*unstructured.Unstructured, string, error) {
	var cur plan.MemberCopy
	if obj, ok := w.members.Get(cluster, w.typ.Resource, fed.GetNamespace(), fed.GetName()); ok {
		cur = plan.MemberCopy{Object: obj, Ours: w.isOurs(obj)}
	} else if last, ok := w.applied.get(cluster, key(fed.GetNamespace(), fed.GetName())); ok {
		cur.LastAdopted = last.adopted
	}
	return plan.ForCopy(w.typ, w.members.Federation(), desired, hash, cur)
}

// ourCopy is what tells how to let a copy go.
type copyRef struct {
	uid     types.UID
	adopted bool
	// objectUID is the federated object's UID the copy records; empty in
	// copies written before copies recorded it.
	objectUID types.UID
}

// refOf is the reference to a member copy found ours.
func refOf(cp metav1.Object) *copyRef {
	return &copyRef{uid: cp.GetUID(), adopted: ownership.IsAdopted(cp), objectUID: types.UID(cp.GetAnnotations()[federationv1beta1.ObjectUIDAnnotation])}
}

// ofAnother reports whether the copy records a federated object other
// than fed: one of the same name made after fed was deleted.
func (r *copyRef) ofAnother(fed metav1.Object) bool {
	return r.objectUID != "" && fed.GetUID() != "" && r.objectUID != fed.GetUID()
}

// ownCopy returns our copy of fed in cluster, or nil when the member holds
// none of ours (nothing, or an object that is not ours): from the cache,
// else from what our last write left, else read from the member.
func (w *Writer) ownCopy(ctx context.Context, cluster string, fed *unstructured.Unstructured) (*copyRef, error) {
	ns, name := fed.GetNamespace(), fed.GetName()
	if cur, ok := w.members.Get(cluster, w.typ.Resource, ns, name); ok {
		if o, _ := w.ownerOf(cur); o != ownership.Us {
			return nil, nil
		}
		return refOf(cur), nil
	}
	if last, ok := w.applied.get(cluster, key(ns, name)); ok {
		return &copyRef{uid: last.uid, adopted: last.adopted}, nil
	}
	live, err := w.readLive(ctx, cluster, fed)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if o, _ := w.ownerOf(live); o != ownership.Us {
		return nil, nil
	}
	return refOf(live), nil
}

// maxNamed bounds the objects named in an event.
const maxNamed = 10

// foreignObjects lists what a member's namespace holds that is not our
// copy: another federation's, adopted, or the member's own objects
// (the member's own defaults and events aside), as resource/name.
func (w *Writer) foreignObjects(ctx context.Context, cluster, namespace string) ([]string, error) {
	objs, err := w.members.NamespaceObjects(ctx, cluster, namespace)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range objs {
		r := o.Resource.Resource
		if r == "events" || federatedtypes.MemberMade(o.Resource.GroupResource(), o.Name) || memberrbac.IsAccessBinding(o.Resource.GroupResource(), &o) {
			continue
		}
		if own, _ := w.ownerOf(&o); own == ownership.Us && !ownership.IsAdopted(&o) {
			continue
		}
		what := r + "/" + o.Name
		if o.Resource.Group != "" {
			what = r + "." + o.Resource.Group + "/" + o.Name
		}
		out = append(out, what)
	}
	slices.Sort(out)
	return out, nil
}

// namedList names up to maxNamed objects, then how many more.
func namedList(names []string) string {
	if len(names) <= maxNamed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNamed], ", "), len(names)-maxNamed)
}
