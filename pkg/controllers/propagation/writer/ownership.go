package writer

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/memberrbac"
	"github.com/federation-v1/federation/pkg/ownership"
)

// Ownership of member objects: see package ownership.

// Event reasons of ownership.
const (
	// ReasonOrphan: a copy was left to its member instead of deleted.
	ReasonOrphan = "OrphanInCluster"
)

// ownerOf tells whose a member object is and, for another federation's,
// names that federation.
func (w *Writer) ownerOf(obj metav1.Object) (ownership.Owner, string) {
	return ownership.Of(obj, w.members.Federation(), w.members.FederationUID())
}

// IsOurs reports whether a member object is this federation's copy (made or
// adopted by it).
func (w *Writer) IsOurs(obj metav1.Object) bool {
	return ownership.IsUs(obj, w.members.Federation(), w.members.FederationUID())
}

// deletesAdopted reports whether deleting fed deletes its adopted copies
// too, instead of leaving them to their members.
func deletesAdopted(fed *unstructured.Unstructured) bool {
	return fed.GetAnnotations()[federationv1beta1.DeleteAdoptedAnnotation] == "true"
}

// ForCopy is what cluster is sent of desired (plan.ForCopy), given what
// our cache holds of its copy there, or what our last write left.
func (w *Writer) ForCopy(cluster string, fed, desired *unstructured.Unstructured, hash string) (*unstructured.Unstructured, string, error) {
	var cur plan.MemberCopy
	if obj, ok := w.members.Get(cluster, w.typ.Resource, fed.GetNamespace(), fed.GetName()); ok {
		cur = plan.MemberCopy{Object: obj, Ours: w.IsOurs(obj)}
	} else if last, ok := w.applied.get(cluster, fedobject.Key(fed.GetNamespace(), fed.GetName())); ok {
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
	if last, ok := w.applied.get(cluster, fedobject.Key(ns, name)); ok {
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
