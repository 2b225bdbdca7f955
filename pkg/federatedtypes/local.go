package federatedtypes

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// HelmReleaseSecretType is the type of the Secrets in which Helm v3 keeps a
// release (sh.helm.release.v1.NAME.vN). They record what was installed
// through the federation: copied to a member, they would show there as the
// member's own releases.
const HelmReleaseSecretType = "helm.sh/release.v1"

// DefaultLocalSecretTypes are the Secret types that stay at the federation
// unless the controller manager's --local-secret-types says otherwise.
var DefaultLocalSecretTypes = []string{HelmReleaseSecretType}

// Local reports whether a federated object stays at the federation and is
// never propagated, with the default Secret types: see LocalWith.
func Local(obj metav1.Object) bool {
	return LocalWith(obj, DefaultLocalSecretTypes)
}

// ApplySetParentLabel marks the parent object of a kubectl ApplySet (a
// Secret or ConfigMap that records the set's members for pruning). It
// describes what was applied at the federation: copied to a member, a
// member-level apply --prune --applyset would prune the federation's copies
// there, and the federation restore them, without end.
const ApplySetParentLabel = "applyset.kubernetes.io/id"

// LocalWith reports whether a federated object stays at the federation and
// is never propagated: it carries the local label, or it is an ApplySet's
// parent, or a service-account token Secret (always, whatever
// secretTypes), or a Secret whose type is one of secretTypes. obj is an unstructured object (as the
// controllers read them) or a typed Secret; other typed objects are local by
// their label only.
func LocalWith(obj metav1.Object, secretTypes []string) bool {
	if obj.GetLabels()[federationv1beta1.LocalLabel] == "true" {
		return true
	}
	if _, ok := obj.GetLabels()[ApplySetParentLabel]; ok {
		return true
	}
	switch o := obj.(type) {
	case *corev1.Secret:
		return LocalSecretType(string(o.Type), secretTypes)
	case *unstructured.Unstructured:
		if o.GetKind() != "Secret" || o.GroupVersionKind().Group != "" {
			return false
		}
		typ, _, _ := unstructured.NestedString(o.Object, "type")
		return LocalSecretType(typ, secretTypes)
	}
	return false
}

// LocalSecretType reports whether Secrets of type typ stay at the
// federation: a service-account token Secret always (it holds the
// federation's own token of a federation ServiceAccount, which
// authenticates to the federation only, and a copy would make each member
// mint its own account's token into it), and the types of secretTypes.
func LocalSecretType(typ string, secretTypes []string) bool {
	return typ == string(corev1.SecretTypeServiceAccountToken) || slices.Contains(secretTypes, typ)
}

// kubernetesService is the Service every cluster has of its own, pointing at
// its API server.
var kubernetesService = struct {
	resource        schema.GroupResource
	namespace, name string
}{schema.GroupResource{Resource: "services"}, metav1.NamespaceDefault, "kubernetes"}

// MembersOwn reports whether the object ns/name of resource gr is one that
// every member has of its own and that no copy may ever replace or delete:
// the Service default/kubernetes. The federation has its own too (labelled
// local), but even one made before that, or stripped of the label, never
// reaches a member.
func MembersOwn(gr schema.GroupResource, ns, name string) bool {
	return gr == kubernetesService.resource && ns == kubernetesService.namespace && name == kubernetesService.name
}
