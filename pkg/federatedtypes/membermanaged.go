package federatedtypes

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// rootCAConfigMap is the ConfigMap a member's root CA publisher keeps in
// every namespace.
const rootCAConfigMap = "kube-root-ca.crt"

// memberWritten are the resources whose objects a member's own
// controllers write: never the federation's to take over.
var memberWritten = map[schema.GroupResource]string{
	{Resource: "endpoints"}:                                 "the member's endpoints controller writes it",
	{Group: "discovery.k8s.io", Resource: "endpointslices"}: "the member's endpoint slice controllers write it",
}

// ManagedByMember says why a member object that the federation did not
// create is kept up by the member itself ("" when it is not): such an
// object is never adopted, whatever the federated object asks, since the
// federation and the member's controller would overwrite each other
// without end (the root CA publisher's kube-root-ca.crt, service account
// token Secrets, anything owned by another member object).
func ManagedByMember(gr schema.GroupResource, obj metav1.Object) string {
	if why, ok := memberWritten[gr]; ok {
		return why
	}
	if refs := obj.GetOwnerReferences(); len(refs) > 0 {
		return fmt.Sprintf("it is owned by %s %s there", refs[0].Kind, refs[0].Name)
	}
	switch gr {
	case schema.GroupResource{Resource: "configmaps"}:
		if obj.GetName() == rootCAConfigMap {
			return "the member's root CA publisher writes it"
		}
	case schema.GroupResource{Resource: "secrets"}:
		if serviceAccountToken(obj) {
			return "the member's token controller writes it"
		}
	}
	return ""
}

// serviceAccountToken reports whether a Secret is a service account
// token: its type, when the object carries it, or the annotation every
// such Secret has (metadata-only copies carry no type).
func serviceAccountToken(obj metav1.Object) bool {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if t, _, _ := unstructured.NestedString(u.Object, "type"); t == string(corev1.SecretTypeServiceAccountToken) {
			return true
		}
	}
	_, named := obj.GetAnnotations()[corev1.ServiceAccountNameKey]
	return named
}
