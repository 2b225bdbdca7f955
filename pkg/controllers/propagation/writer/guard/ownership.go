package guard

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/memberrbac"
)

// Adoption and conflicts: whether a member's own object of a federated
// object's name may be taken over, and telling (once) of one that may not.

// ReasonConflict: a member holds an object of the federated object's name
// that is not ours; it is left alone.
const ReasonConflict = "ConflictInCluster"

// AdoptionAsked reports whether the member's own object of fed's name in
// cluster may be taken over: the federated object says so (which took the
// adoption right at admission), or, when it says nothing, the controller
// manager's default.
func (g *Guard) AdoptionAsked(cluster string, fed *unstructured.Unstructured) bool {
	if r := fed.GetAnnotations()[federationv1beta1.ConflictResolutionAnnotation]; r != "" {
		return r == federationv1beta1.ConflictResolutionAdopt
	}
	return g.opts.DefaultConflictResolution == federationv1beta1.ConflictResolutionAdopt || g.defaultAccount(cluster, fed)
}

// defaultAccount reports whether fed is a ServiceAccount named default in
// a namespace the federation created in cluster: the member made it for
// the federation's namespace, so a federated one can only mean to
// configure it (imagePullSecrets); it adopts it unless it says abort, and
// gives it back when it is deleted. In a namespace adopted from the member
// (its default, say) the member's pods run as that account: taking it
// over needs the adoption right, as for any other object.
func (g *Guard) defaultAccount(cluster string, fed *unstructured.Unstructured) bool {
	if !g.typ.AdoptsMemberMade || fed.GetName() != g.typ.MemberMade {
		return false
	}
	ns, ok := g.members.Get(cluster, membercluster.NamespacesResource, "", fed.GetNamespace())
	return ok && ns.GetLabels()[memberrbac.CreatedByLabel] == g.members.Federation()
}

// AdoptedAtJoin reports whether a member's own namespace was adopted for
// this federation by the member's admin (kubefed join --adopt-namespaces):
// the federated Namespace of its name takes it over without asking.
func (g *Guard) AdoptedAtJoin(live metav1.Object) bool {
	return g.typ.Namespace && live.GetLabels()[memberrbac.AdoptedByLabel(g.members.Federation())] == memberrbac.Adopted
}

// Conflict reports a member object of fed's name that is not ours, and
// returns the error that keeps the copy failed (named in the Propagated
// condition). The Warning event is told once per member object.
func (g *Guard) Conflict(cluster string, fed *unstructured.Unstructured, theirs metav1.Object, other string) error {
	objKey := fedobject.Key(fed.GetNamespace(), fed.GetName())
	msg := fmt.Sprintf("%s in cluster %s belongs to federation %s: left as it is", g.objs.What(objKey), cluster, other)
	if other == "" {
		msg = fmt.Sprintf("%s exists in cluster %s and was not created by this federation: left as it is (to adopt it, annotate the federated object %s=%s, "+
			"which takes the right to update %s/%s)",
			g.objs.What(objKey), cluster, federationv1beta1.ConflictResolutionAnnotation, federationv1beta1.ConflictResolutionAdopt,
			g.typ.Resource.Resource, federationv1beta1.AdoptionSubresource)
	}
	return g.tellConflict(cluster, fed, theirs, msg)
}

// MemberManaged reports a member object of fed's name that the member's
// own controllers keep up (federatedtypes.ManagedByMember says why): it
// is never adopted, whatever fed asks.
func (g *Guard) MemberManaged(cluster string, fed *unstructured.Unstructured, theirs metav1.Object, why string) error {
	objKey := fedobject.Key(fed.GetNamespace(), fed.GetName())
	return g.tellConflict(cluster, fed, theirs, fmt.Sprintf("%s in cluster %s is the member's own and kept up by it (%s): the federation never takes it over",
		g.objs.What(objKey), cluster, why))
}

// tellConflict records a conflict's event once per member object, and
// returns its error.
func (g *Guard) tellConflict(cluster string, fed *unstructured.Unstructured, theirs metav1.Object, msg string) error {
	objKey := fedobject.Key(fed.GetNamespace(), fed.GetName())
	if told, ok := g.conflicts.Swap(fedobject.CopyKey(cluster, objKey), theirs.GetUID()); !ok || told != theirs.GetUID() {
		g.recorder.Event(fed, corev1.EventTypeWarning, ReasonConflict, msg)
	}
	return fmt.Errorf("%s", msg)
}

// ConflictKnown reports whether a conflict was found for the copy of
// objKey in cluster: its next write reads the member first instead of
// trying a create that fails again.
func (g *Guard) ConflictKnown(cluster, objKey string) bool {
	_, ok := g.conflicts.Load(fedobject.CopyKey(cluster, objKey))
	return ok
}

// Resolved forgets the conflict of a copy our write made ours.
func (g *Guard) Resolved(cluster, objKey string) {
	g.conflicts.Delete(fedobject.CopyKey(cluster, objKey))
}
