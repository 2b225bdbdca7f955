package federatedtypes

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// podSecurityPrefix starts the Pod Security admission labels of a namespace.
const podSecurityPrefix = "pod-security.kubernetes.io/"

// PodSecurityDefaults are the labels a member's copy of a federated
// namespace gets unless the federated namespace sets Pod Security labels
// of its own: a member need not trust the federation with pods that ask
// for the host (the member's admission policy bounds the federation's own
// writes; this bounds the pods its controllers create).
var PodSecurityDefaults = map[string]string{
	podSecurityPrefix + "enforce": "baseline",
	podSecurityPrefix + "warn":    "baseline",
	podSecurityPrefix + "audit":   "baseline",
}

// defaultNamespace gives a namespace's member copy PodSecurityDefaults,
// unless any pod-security.kubernetes.io/ label is there already: then the
// federated namespace chose, and its own are kept.
func defaultNamespace(obj *unstructured.Unstructured) {
	labels := obj.GetLabels()
	for k := range labels {
		if strings.HasPrefix(k, podSecurityPrefix) {
			return
		}
	}
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range PodSecurityDefaults {
		labels[k] = v
	}
	obj.SetLabels(labels)
}
