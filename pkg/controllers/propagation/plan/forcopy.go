package plan

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/memberrbac"
	"github.com/federation-v1/federation/pkg/ownership"
)

// MemberCopy is what is known of one cluster's copy when its desired
// object is made: the member's object from the federation's cache (nil
// when the cache has none), whether it is the federation's, and, when the
// cache has none, whether the federation's last write there left it
// adopted.
type MemberCopy struct {
	Object      *unstructured.Unstructured
	Ours        bool
	LastAdopted bool
}

// ForCopy is what a cluster is sent of desired (with hash), of type t,
// given its copy there, and its hash:
//   - a copy that was adopted stays marked adopted (the mark is part of
//     its hash);
//   - a Namespace the federation creates there is marked created by
//     federation, unless its copy there exists without the mark (created
//     before the mark, or the mark taken off: the member's policy refuses
//     adding it later) or is adopted (where the member has a namespace of
//     its own of that name, the create fails and it is left alone or
//     adopted, unmarked);
//   - the pod marks that cannot be added to an object once it exists
//     (federatedtypes.PodMarks) are left off where the copy lacks them.
func ForCopy(t *federatedtypes.Type, federation string, desired *unstructured.Unstructured, hash string, cur MemberCopy) (*unstructured.Unstructured, string, error) {
	adopted := cur.LastAdopted
	if cur.Object != nil {
		adopted = cur.Ours && ownership.IsAdopted(cur.Object)
	}
	var err error
	if adopted && !ownership.IsAdopted(desired) {
		if desired, hash, err = WithAdopted(t, desired); err != nil {
			return nil, "", err
		}
	}
	if t.Namespace && !ownership.IsAdopted(desired) && !keptUnmarked(cur) {
		out := desired.DeepCopy()
		labels := out.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[memberrbac.CreatedByLabel] = federation
		out.SetLabels(labels)
		if desired, hash, err = DesiredFor(out, nil, "", nil); err != nil {
			return nil, "", err
		}
	}
	if t.Pods.HasFixed(desired) && cur.Object != nil && t.Pods.MissesFixed(cur.Object, desired) {
		return Unmarked(t, desired)
	}
	return desired, hash, nil
}

// keptUnmarked reports whether a Namespace's copy is ours and there
// without the created mark.
func keptUnmarked(cur MemberCopy) bool {
	if cur.Object == nil || !cur.Ours {
		return false
	}
	_, marked := cur.Object.GetLabels()[memberrbac.CreatedByLabel]
	return !marked
}
