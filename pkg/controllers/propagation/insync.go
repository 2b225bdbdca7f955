package propagation

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// version is what tells that a member copy changed since we applied it: its
// generation when the type has one (spec changes only), else its
// resourceVersion (ConfigMaps, Secrets, Namespaces have no generation).
func version(obj metav1.Object) string {
	if g := obj.GetGeneration(); g > 0 {
		return "g" + strconv.FormatInt(g, 10)
	}
	return "rv" + obj.GetResourceVersion()
}

// InSync reports whether the member copy cur holds what desired (with hash)
// says, without comparing member-defaulted fields: the hash we stamped on
// it must match, it must carry our labels and annotations, and its version
// must be the one our last write left (lastVersion; "" when unknown, as
// after a restart).
func InSync(cur, desired *unstructured.Unstructured, hash, lastVersion string) bool {
	if cur.GetAnnotations()[federationv1beta1.AppliedHashAnnotation] != hash {
		return false
	}
	if !contains(cur.GetLabels(), desired.GetLabels()) || !contains(cur.GetAnnotations(), desired.GetAnnotations()) {
		return false
	}
	return lastVersion == "" || lastVersion == version(cur)
}

func contains(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}
