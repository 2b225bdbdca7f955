package federationannotations

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/kubernetes/pkg/apis/apps"
	"k8s.io/kubernetes/pkg/apis/batch"
	api "k8s.io/kubernetes/pkg/apis/core"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/clusterselector"
)

func TestValidate(t *testing.T) {
	badSelector := map[string]string{clusterselector.Annotation: `[{"key":"a","operator":"?"}]`}
	goodPrefs := `{"Rebalance":true,"Clusters":{"*":{"Weight":1}}}`
	badPrefs := `{"clusters":{"*":{"weight":"heavy"}}}`
	cases := []struct {
		name        string
		resource    schema.GroupVersionResource
		object      runtime.Object
		annotations map[string]string
		subresource string
		wantField   string
	}{
		{name: "no annotations", resource: apps.Resource("deployments").WithVersion("v1"), object: &apps.Deployment{}},
		{name: "bad selector on a configmap", resource: api.Resource("configmaps").WithVersion("v1"), object: &api.ConfigMap{},
			annotations: badSelector, wantField: "metadata.annotations[" + clusterselector.Annotation + "]"},
		{name: "good preferences on a deployment", resource: apps.Resource("deployments").WithVersion("v1"), object: &apps.Deployment{},
			annotations: map[string]string{federationv1beta1.DeploymentPreferencesAnnotation: goodPrefs}},
		{name: "bad preferences on a deployment", resource: apps.Resource("deployments").WithVersion("v1"), object: &apps.Deployment{},
			annotations: map[string]string{federationv1beta1.DeploymentPreferencesAnnotation: badPrefs},
			wantField:   "metadata.annotations[" + federationv1beta1.DeploymentPreferencesAnnotation + "]"},
		{name: "a weight above 2^31-1", resource: apps.Resource("deployments").WithVersion("v1"), object: &apps.Deployment{},
			annotations: map[string]string{federationv1beta1.DeploymentPreferencesAnnotation: `{"clusters":{"cluster1":{"weight":4611686018427387904}}}`},
			wantField:   "metadata.annotations[" + federationv1beta1.DeploymentPreferencesAnnotation + "].clusters[cluster1].weight: Invalid value: 4611686018427387904"},
		{name: "bad preferences through extensions", resource: schema.GroupVersionResource{Group: "extensions", Version: "v1beta1", Resource: "replicasets"},
			object: &apps.ReplicaSet{}, annotations: map[string]string{federationv1beta1.ReplicaSetPreferencesAnnotation: badPrefs},
			wantField: "metadata.annotations[" + federationv1beta1.ReplicaSetPreferencesAnnotation + "]"},
		{name: "bad job preferences", resource: batch.Resource("jobs").WithVersion("v1"), object: &batch.Job{},
			annotations: map[string]string{federationv1beta1.JobPreferencesAnnotation: badPrefs},
			wantField:   "metadata.annotations[" + federationv1beta1.JobPreferencesAnnotation + "]"},
		{name: "bad statefulset preferences", resource: apps.Resource("statefulsets").WithVersion("v1"), object: &apps.StatefulSet{},
			annotations: map[string]string{federationv1beta1.StatefulSetPreferencesAnnotation: badPrefs},
			wantField:   "metadata.annotations[" + federationv1beta1.StatefulSetPreferencesAnnotation + "]"},
		{name: "another kind's preferences are not ours to check", resource: batch.Resource("jobs").WithVersion("v1"), object: &batch.Job{},
			annotations: map[string]string{federationv1beta1.DeploymentPreferencesAnnotation: badPrefs}},
		{name: "adoption asked for", resource: api.Resource("configmaps").WithVersion("v1"), object: &api.ConfigMap{},
			annotations: map[string]string{"federation.kubernetes.io/conflict-resolution": "adopt", "federation.kubernetes.io/delete-adopted-copies": "true"}},
		{name: "an unknown conflict resolution", resource: api.Resource("configmaps").WithVersion("v1"), object: &api.ConfigMap{},
			annotations: map[string]string{"federation.kubernetes.io/conflict-resolution": "adpot"},
			wantField:   `metadata.annotations[federation.kubernetes.io/conflict-resolution]: Unsupported value: "adpot"`},
		{name: "delete-adopted-copies not a boolean", resource: apps.Resource("deployments").WithVersion("v1"), object: &apps.Deployment{},
			annotations: map[string]string{"federation.kubernetes.io/delete-adopted-copies": "yes"},
			wantField:   `metadata.annotations[federation.kubernetes.io/delete-adopted-copies]: Unsupported value: "yes"`},
		{name: "status updates are not checked", resource: apps.Resource("deployments").WithVersion("v1"), object: &apps.Deployment{},
			annotations: badSelector, subresource: "status"},
	}
	validator := New()
	validator.SetAuthorizer(authorizerfactory.NewAlwaysAllowAuthorizer()) // the adoption right is adoption_test.go's
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := c.object.DeepCopyObject()
			accessor, err := meta.Accessor(obj)
			require.NoError(t, err)
			accessor.SetAnnotations(c.annotations)
			attrs := admission.NewAttributesRecord(obj, nil,
				schema.GroupVersionKind{}, "ns", "name", c.resource, c.subresource, admission.Create, &metav1.CreateOptions{}, false, nil)
			err = validator.Validate(context.Background(), attrs, nil)
			if c.wantField == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsInvalid(err), "want a 422, got %v", err)
			assert.Contains(t, err.Error(), c.wantField)
		})
	}
}
