// Package ownership tells whose a member object is, from its labels
// alone: a copy of this federation's, another federation's object, or the
// member's own. The propagation controllers decide with it what they may
// write, adopt or delete; kubefed finds stray copies with it. It imports
// only the API.
//
// A member object is ours when it carries our federation-name label and
// our UID label or none (copies written before the UID label existed);
// another federation's when it carries another name or UID; else the
// member's own. Another federation's object is never written, deleted or
// orphaned; the member's own is taken over only when adoption is asked
// for, and is then marked adopted, so that deleting the federated object
// gives it back instead of deleting it.
package ownership

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// Owner says whose a member object is.
type Owner int

const (
	// Us: a copy of this federation.
	Us Owner = iota
	// Member: the member's own object.
	Member
	// Other: another federation's object.
	Other
)

// Of tells whose a member object is for the federation name with UID uid
// ("" when not known) and, for another federation's, names that
// federation.
func Of(obj metav1.Object, name, uid string) (Owner, string) {
	labels := obj.GetLabels()
	theirName, theirUID := labels[federationv1beta1.FederationLabel], labels[federationv1beta1.FederationUIDLabel]
	switch {
	case theirUID != "" && theirUID == uid && (theirName == "" || theirName == name):
		// Ours, even when someone took our name label off: it is put back.
		return Us, ""
	case theirName == name && (theirUID == "" || uid == ""):
		// Written before copies carried our UID (or ours is not known).
		return Us, ""
	case theirName == "" && theirUID == "":
		return Member, ""
	case theirName == "" || theirName == name:
		return Other, fmt.Sprintf("%q with UID %s", theirName, theirUID)
	}
	return Other, fmt.Sprintf("%q", theirName)
}

// IsUs reports whether a member object is a copy of the federation name
// with UID uid, made or adopted by it: Of says Us.
func IsUs(obj metav1.Object, name, uid string) bool {
	o, _ := Of(obj, name, uid)
	return o == Us
}

// OurCopy reports whether a member object is a copy written by federation
// name with UID uid: it has our name label, and our UID label or none (a
// copy written before copies recorded it). An empty uid (not known) takes
// any. An object another member object controls is not a copy, though it
// may carry our label: a Deployment's ReplicaSets inherit its template's.
func OurCopy(obj metav1.Object, name, uid string) bool {
	l := obj.GetLabels()
	if l[federationv1beta1.FederationLabel] != name {
		return false
	}
	if got := l[federationv1beta1.FederationUIDLabel]; got != "" && uid != "" && got != uid {
		return false
	}
	return metav1.GetControllerOf(obj) == nil
}

// IsAdopted reports whether a member copy was the member's before the
// federation took it over.
func IsAdopted(obj metav1.Object) bool {
	return obj.GetAnnotations()[federationv1beta1.AdoptedAnnotation] == "true"
}
