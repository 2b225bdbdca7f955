package tombstone

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

func TestARecordRoundTripsThroughItsConfigMapData(t *testing.T) {
	deleted := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
	obj := &metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "1234",
		Annotations: map[string]string{
			federationv1beta1.DeleteAdoptedAnnotation:          "true",
			"kubectl.kubernetes.io/last-applied-configuration": "{...}",
		},
		Labels: map[string]string{federationv1beta1.LocalLabel: "true", "app": "web"},
	}
	r := New(schema.GroupResource{Group: "autoscaling", Resource: "horizontalpodautoscalers"}, obj, deleted)
	r.ScaleTarget = &ScaleTarget{Kind: "Deployment", Name: "web"}

	meta := r.Meta()
	assert.Equal(t, "tombstone-1234", meta.Name)
	assert.Equal(t, federationv1beta1.SystemNamespace, meta.Namespace)
	assert.Equal(t, map[string]string{Label: "horizontalpodautoscalers.autoscaling"}, meta.Labels)

	back, err := Parse(r.Data())
	require.NoError(t, err)
	assert.Equal(t, r, back)
	assert.Equal(t, "ns/web", back.ObjectKey())
	assert.Equal(t, map[string]string{federationv1beta1.DeleteAdoptedAnnotation: "true"}, back.Annotations, "only what decides the deletion")
	assert.Equal(t, map[string]string{federationv1beta1.LocalLabel: "true"}, back.Labels)
}

func TestParseNamesWhatIsWrong(t *testing.T) {
	good := New(schema.GroupResource{Resource: "configmaps"}, &metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "u"}, time.Now()).Data()
	for key, value := range map[string]string{
		"uid": "", "name": "", "resource": "", "deletionTimestamp": "yesterday", "annotations": "{not json",
	} {
		data := map[string]string{}
		for k, v := range good {
			data[k] = v
		}
		data[key] = value
		_, err := Parse(data)
		require.Error(t, err, key)
		assert.Contains(t, err.Error(), "data."+key)
	}
}

// A custom resource's name and group can be longer than a label value
// may be: its tombstones were refused, and so was its deletion.
func TestLabelValueIsAValidLabelValueForLongCustomResources(t *testing.T) {
	assert.Equal(t, "deployments.apps", LabelValue(schema.GroupResource{Group: "apps", Resource: "deployments"}))
	long := schema.GroupResource{Group: "crd-publish-openapi-test-unknown-at-root.example.com", Resource: "e2e-test-crd-publish-openapi-536-8588-crds"}
	v := LabelValue(long)
	assert.Empty(t, validation.IsValidLabelValue(v), v)
	assert.True(t, strings.HasPrefix(v, "e2e-test-crd-publish-o"), v)
	other := long
	other.Group = "crd-publish-openapi-test-unknown-in-nested.example.com"
	assert.NotEqual(t, v, LabelValue(other), "one value per resource")
	assert.Equal(t, v, LabelValue(long), "stable")
}
