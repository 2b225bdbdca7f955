package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

func TestHoldsDesired(t *testing.T) {
	fed := parse(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ns, labels: {app: d}, annotations: {note: x}}
spec: {replicas: 2, template: {spec: {containers: [{name: c, image: i}]}}}`)
	desired, hash, err := Desired(federatedtypes.ByName("deployments"), fed, "fed", "")
	require.NoError(t, err)
	// What the member holds after our apply: its own defaults, status,
	// annotations of its controllers, generation 4.
	member := func(edit func(m *unstructured.Unstructured)) *unstructured.Unstructured {
		m := desired.DeepCopy()
		m.SetGeneration(4)
		m.SetResourceVersion("100")
		_ = unstructured.SetNestedField(m.Object, "RollingUpdate", "spec", "strategy", "type")
		_ = unstructured.SetNestedField(m.Object, "Always", "spec", "template", "spec", "containers", "0", "imagePullPolicy")
		a := m.GetAnnotations()
		a["deployment.kubernetes.io/revision"] = "1"
		m.SetAnnotations(a)
		m.Object["status"] = map[string]any{"replicas": int64(2)}
		if edit != nil {
			edit(m)
		}
		return m
	}
	for _, tt := range []struct {
		name string
		cur  *unstructured.Unstructured
		last string
		want bool
	}{
		{"member defaults, status and foreign annotations do not matter", member(nil), "g4", true},
		{"unknown last version (after a restart): the hash decides", member(nil), "", true},
		{"status and metadata updates keep the generation", member(func(m *unstructured.Unstructured) { m.SetResourceVersion("200") }), "g4", true},
		{"spec edited in the member: a new generation", member(func(m *unstructured.Unstructured) { m.SetGeneration(5) }), "g4", false},
		{"federated object changed: another hash", member(func(m *unstructured.Unstructured) {
			a := m.GetAnnotations()
			a[federationv1beta1.AppliedHashAnnotation] = "old"
			m.SetAnnotations(a)
		}), "g4", false},
		{"our annotation removed by hand", member(func(m *unstructured.Unstructured) {
			a := m.GetAnnotations()
			delete(a, "note")
			m.SetAnnotations(a)
		}), "g4", false},
		{"our label changed by hand", member(func(m *unstructured.Unstructured) {
			m.SetLabels(map[string]string{"app": "other", "federation.kubernetes.io/federation-name": "fed"})
		}), "g4", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, holdsDesired(tt.cur, desired, hash, tt.last))
		})
	}
}

func TestVersionWithoutGeneration(t *testing.T) {
	cm := parse(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: a, resourceVersion: "12"}}`)
	assert.Equal(t, "rv12", Version(cm), "ConfigMaps have no generation: any change counts")
	cm.SetGeneration(3)
	assert.Equal(t, "g3", Version(cm))
}

func TestSameVersionIsToldAsItWasRemembered(t *testing.T) {
	svc := parse(t, `{apiVersion: v1, kind: Service, metadata: {name: a, resourceVersion: "12"}, spec: {type: LoadBalancer}}`)
	shaped := Version(svc)
	require.True(t, strings.HasPrefix(shaped, "s"), shaped)
	svc.SetResourceVersion("13")
	svc.Object["status"] = map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": "127.1.1.1"}}}}
	assert.True(t, SameVersion(shaped, svc), "a status write keeps the shape")
	assert.False(t, SameVersion("rv12", svc), "remembered from a metadata answer: the resourceVersion decides")
	assert.True(t, SameVersion("rv13", svc))
	_ = unstructured.SetNestedField(svc.Object, "ClusterIP", "spec", "type")
	assert.False(t, SameVersion(shaped, svc), "spec changed there")
}
