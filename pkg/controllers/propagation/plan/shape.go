package plan

import (
	"encoding/json"
	"hash/fnv"
	"maps"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// shape digests a whole member object without what changes when only its
// status is written: the status, and the metadata a status write moves
// (resourceVersion, managedFields). Kubernetes keeps no generation for
// Services and HPAs, so their resourceVersion is all that tells a change;
// but the member writes their status (a LoadBalancer's address, an HPA's
// current replicas) right after our first write, and that is no change of
// what we applied; nor is what the member fills in, such as a claim's
// binding (federatedtypes.WithoutMemberFilled). ok is false for an object
// with nothing but metadata (a metadata-only cache's): it has no shape to
// compare.
func shape(u *unstructured.Unstructured) (digest string, ok bool) {
	body := make(map[string]any, len(u.Object))
	for k, v := range u.Object {
		switch k {
		case "apiVersion", "kind", "status":
		case "metadata":
			meta, _ := v.(map[string]any)
			meta = maps.Clone(meta)
			delete(meta, "resourceVersion")
			delete(meta, "managedFields")
			body[k] = meta
		default:
			body[k] = v
			ok = true
		}
	}
	if !ok {
		return "", false
	}
	federatedtypes.WithoutMemberFilled(u.GroupVersionKind().GroupKind(), body)
	// Map keys marshal sorted: the same object gives the same digest.
	data, err := json.Marshal(body)
	if err != nil {
		return "", false
	}
	h := fnv.New64a()
	_, _ = h.Write(data)
	return strconv.FormatUint(h.Sum64(), 16), true
}
