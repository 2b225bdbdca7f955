package federatedtypes

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// Local reports whether a federated object stays at the federation and is
// never propagated: it carries the local label.
func Local(obj metav1.Object) bool {
	return obj.GetLabels()[federationv1beta1.LocalLabel] == "true"
}
