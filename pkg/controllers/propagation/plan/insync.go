package plan

import (
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// Version is what tells that a member copy changed since we applied it: its
// generation when the type has one (spec changes only); for a whole object
// without one (Services, HPAs: Kubernetes keeps none for them, yet their
// members write their status), the digest of all but its status (see
// shape); else its resourceVersion (ConfigMaps, Secrets and Namespaces,
// read as metadata only, have neither a generation nor a status written by
// their members).
func Version(obj metav1.Object) string {
	if g := obj.GetGeneration(); g > 0 {
		return "g" + strconv.FormatInt(g, 10)
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if s, ok := shape(u); ok {
			return "s" + s
		}
	}
	return "rv" + obj.GetResourceVersion()
}

// SameVersion reports whether cur is still at version last, told the way
// last was: a version remembered from a metadata answer is a
// resourceVersion, and cur is compared by its resourceVersion even when
// it is a whole object (a live read).
func SameVersion(last string, cur metav1.Object) bool {
	switch {
	case strings.HasPrefix(last, "g"):
		return last == "g"+strconv.FormatInt(cur.GetGeneration(), 10)
	case strings.HasPrefix(last, "rv"):
		return last == "rv"+cur.GetResourceVersion()
	}
	return last == Version(cur)
}

// holdsDesired reports whether the member copy cur holds what desired
// (with hash) says, without comparing member-defaulted fields: the hash we stamped on
// it must match, it must carry our labels and annotations, and its version
// must be the one our last write left (lastVersion; "" when unknown, as
// after a restart).
func holdsDesired(cur, desired *unstructured.Unstructured, hash, lastVersion string) bool {
	if cur.GetAnnotations()[federationv1beta1.AppliedHashAnnotation] != hash {
		return false
	}
	if !contains(cur.GetLabels(), desired.GetLabels()) || !contains(cur.GetAnnotations(), desired.GetAnnotations()) {
		return false
	}
	return lastVersion == "" || SameVersion(lastVersion, cur)
}

func contains(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}
