package federatedtypes

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// IndexedJob reports a Job with spec.completionMode Indexed: each of its
// copies would run indexes 0..completions-1, so it is not divided.
func IndexedJob(obj *unstructured.Unstructured) bool {
	mode, _, _ := unstructured.NestedString(obj.Object, "spec", "completionMode")
	return mode == "Indexed"
}
