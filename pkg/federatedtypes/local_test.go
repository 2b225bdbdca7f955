package federatedtypes

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

func secret(typ string, labels map[string]any) *unstructured.Unstructured {
	meta := map[string]any{"name": "s", "namespace": "ns"}
	if labels != nil {
		meta["labels"] = labels
	}
	obj := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": meta}
	if typ != "" {
		obj["type"] = typ
	}
	return &unstructured.Unstructured{Object: obj}
}

func TestLocal(t *testing.T) {
	helmRelease := secret(HelmReleaseSecretType, nil)
	configMapTyped := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"},
		"type": HelmReleaseSecretType, // not a Secret: its "type" means nothing
	}}
	otherGroupSecret := secret(HelmReleaseSecretType, nil)
	otherGroupSecret.SetAPIVersion("example.com/v1")
	for _, tc := range []struct {
		name  string
		obj   metav1.Object
		types []string
		want  bool
	}{
		{"labelled", secret("Opaque", map[string]any{federationv1beta1.LocalLabel: "true"}), nil, true},
		{"label not true", secret("Opaque", map[string]any{federationv1beta1.LocalLabel: "yes"}), DefaultLocalSecretTypes, false},
		{"opaque secret", secret("Opaque", nil), DefaultLocalSecretTypes, false},
		{"secret without type", secret("", nil), DefaultLocalSecretTypes, false},
		{"helm release", helmRelease, DefaultLocalSecretTypes, true},
		{"helm release, no local types", helmRelease, []string{}, false},
		{"type from the flag", secret("example.com/local", nil), []string{"example.com/local"}, true},
		{"helm release, other types from the flag", helmRelease, []string{"example.com/local"}, false},
		{"configmap with a type field", configMapTyped, DefaultLocalSecretTypes, false},
		{"Secret kind of another group", otherGroupSecret, DefaultLocalSecretTypes, false},
		{"typed helm release", &corev1.Secret{Type: HelmReleaseSecretType}, DefaultLocalSecretTypes, true},
		{"typed opaque secret", &corev1.Secret{Type: corev1.SecretTypeOpaque}, DefaultLocalSecretTypes, false},
		{"typed configmap", &corev1.ConfigMap{}, DefaultLocalSecretTypes, false},
		{"an ApplySet's parent Secret", secret("Opaque", map[string]any{ApplySetParentLabel: "applyset-abc-v1"}), nil, true},
		{"an ApplySet's parent ConfigMap", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{ApplySetParentLabel: "applyset-abc-v1"}}}, nil, true},
		{"a service-account token Secret", secret(string(corev1.SecretTypeServiceAccountToken), nil), DefaultLocalSecretTypes, true},
		{"a token Secret, whatever the flag says", secret(string(corev1.SecretTypeServiceAccountToken), nil), []string{}, true},
		{"a typed token Secret", &corev1.Secret{Type: corev1.SecretTypeServiceAccountToken}, nil, true},
		{"a member of an ApplySet", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"applyset.kubernetes.io/part-of": "applyset-abc-v1"}}}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LocalWith(tc.obj, tc.types); got != tc.want {
				t.Errorf("LocalWith(%s, %q) = %v, want %v", tc.name, tc.types, got, tc.want)
			}
		})
	}
	if !Local(helmRelease) {
		t.Error("Local: a Helm release Secret is not local by default")
	}
	if Local(secret("Opaque", nil)) {
		t.Error("Local: an Opaque Secret is local by default")
	}
}

func TestMembersOwn(t *testing.T) {
	services := schema.GroupResource{Resource: "services"}
	for _, tc := range []struct {
		gr       schema.GroupResource
		ns, name string
		want     bool
	}{
		{services, "default", "kubernetes", true},
		{services, "other", "kubernetes", false},
		{services, "default", "web", false},
		{schema.GroupResource{Resource: "configmaps"}, "default", "kubernetes", false},
		{schema.GroupResource{Group: "example.com", Resource: "services"}, "default", "kubernetes", false},
	} {
		if got := MembersOwn(tc.gr, tc.ns, tc.name); got != tc.want {
			t.Errorf("MembersOwn(%s, %s/%s) = %v, want %v", tc.gr, tc.ns, tc.name, got, tc.want)
		}
	}
}
