package federatedtypes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestManagedByMemberTellsWhatAMembersControllersWrite(t *testing.T) {
	configMaps := schema.GroupResource{Resource: "configmaps"}
	secrets := schema.GroupResource{Resource: "secrets"}
	meta := func(name string, edit func(*metav1.ObjectMeta)) *metav1.PartialObjectMetadata {
		o := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"}}
		if edit != nil {
			edit(&o.ObjectMeta)
		}
		return o
	}
	tokenByType := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "t", "namespace": "team-a"},
		"type": "kubernetes.io/service-account-token",
	}}
	for _, tt := range []struct {
		name string
		gr   schema.GroupResource
		obj  metav1.Object
		want string
	}{
		{"the root CA ConfigMap", configMaps, meta("kube-root-ca.crt", nil), "root CA publisher"},
		{"another ConfigMap", configMaps, meta("settings", nil), ""},
		{"a token Secret by its annotation", secrets, meta("t", func(m *metav1.ObjectMeta) {
			m.Annotations = map[string]string{"kubernetes.io/service-account.name": "builder"}
		}), "token controller"},
		{"a token Secret by its type", secrets, tokenByType, "token controller"},
		{"an Opaque Secret", secrets, meta("db", nil), ""},
		{"an object owned by another", schema.GroupResource{Group: "apps", Resource: "replicasets"}, meta("web-1", func(m *metav1.ObjectMeta) {
			m.OwnerReferences = []metav1.OwnerReference{{Kind: "Deployment", Name: "web"}}
		}), "owned by Deployment web"},
		{"an EndpointSlice", schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, meta("web-x", nil), "endpoint slice"},
		{"the default ServiceAccount (adopted on purpose)", schema.GroupResource{Resource: "serviceaccounts"}, meta("default", nil), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ManagedByMember(tt.gr, tt.obj)
			if tt.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, tt.want)
		})
	}
}

func TestServedAs(t *testing.T) {
	assert.Equal(t, "deployments", ServedAs(schema.GroupResource{Group: "extensions", Resource: "deployments"}).Name)
	assert.Equal(t, "deployments", ServedAs(schema.GroupResource{Group: "apps", Resource: "deployments"}).Name)
	assert.Nil(t, ServedAs(schema.GroupResource{Group: "batch", Resource: "deployments"}))
	assert.Equal(t, "jobs", ServedAs(schema.GroupResource{Group: "batch", Resource: "jobs"}).Name)
}
