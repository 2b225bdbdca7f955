package federatedtypes

import (
	"maps"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// claimBindingAnnotations are what a member's volume controllers write on a
// claim as they bind it.
var claimBindingAnnotations = []string{
	"pv.kubernetes.io/bind-completed", "pv.kubernetes.io/bound-by-controller",
	"volume.kubernetes.io/storage-provisioner", "volume.beta.kubernetes.io/storage-provisioner",
	"volume.kubernetes.io/selected-node",
}

// memberFilled drop, by kind, what a member writes into a copy besides its
// status: a claim's binding (its volume, a default class, the binding's
// annotations), which the federation never sends.
var memberFilled = map[schema.GroupKind]func(body map[string]any){
	{Kind: "PersistentVolumeClaim"}: func(body map[string]any) {
		if spec, ok := body["spec"].(map[string]any); ok {
			spec = maps.Clone(spec)
			delete(spec, "volumeName")
			delete(spec, "storageClassName")
			body["spec"] = spec
		}
		meta, _ := body["metadata"].(map[string]any)
		if annotations, ok := meta["annotations"].(map[string]any); ok {
			annotations = maps.Clone(annotations)
			for _, a := range claimBindingAnnotations {
				delete(annotations, a)
			}
			meta["annotations"] = annotations
		}
	},
}

// WithoutMemberFilled removes from body, a copy's top-level fields (its
// metadata a copy of its own), what the member fills in for a copy of kind
// gk, so that comparing two versions of a copy sees only changes to what
// the federation applied.
func WithoutMemberFilled(gk schema.GroupKind, body map[string]any) {
	if drop := memberFilled[gk]; drop != nil {
		drop(body)
	}
}
