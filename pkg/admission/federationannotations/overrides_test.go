package federationannotations

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/kubernetes/pkg/apis/apps"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"

	"github.com/federation-v1/federation/pkg/overrides"
)

// deployment is an internal Deployment, as admission sees it.
func deployment(rules string) *apps.Deployment {
	return &apps.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Annotations: map[string]string{overrides.Annotation: rules}},
		Spec: apps.DeploymentSpec{Replicas: 3, Template: api.PodTemplateSpec{Spec: api.PodSpec{
			Containers: []api.Container{{Name: "app", Image: "nginx:1.27"}},
		}}},
		Status: apps.DeploymentStatus{Replicas: 3},
	}
}

func validateObject(t *testing.T, resource schema.GroupVersionResource, obj, old runtime.Object) error {
	t.Helper()
	op, opts := admission.Create, runtime.Object(&metav1.CreateOptions{})
	if old != nil {
		op, opts = admission.Update, &metav1.UpdateOptions{}
	}
	attrs := admission.NewAttributesRecord(obj, old, schema.GroupVersionKind{Group: "apps", Kind: "Deployment"},
		"ns", "web", resource, "", op, opts, false, nil)
	return New().Validate(context.Background(), attrs, nil)
}

func TestValidateOverrides(t *testing.T) {
	deployments := apps.Resource("deployments").WithVersion("v1")
	cases := []struct {
		name, rules, want string
		resource          schema.GroupVersionResource
	}{
		{name: "good rules", rules: `[{"clusters":["c1"],"image":{"tag":"1.28"}},
			{"clusterSelector":[{"key":"region","operator":"in","values":["eu"]}],"container":"app","env":[{"name":"REGION","value":"eu"}]},
			{"patches":[{"op":"test","path":"/spec/template/spec/containers/0/image","value":"nginx:1.27"},
				{"op":"add","path":"/metadata/labels/tier","value":"gold"}]}]`},
		{name: "through extensions", resource: schema.GroupVersionResource{Group: "extensions", Version: "v1beta1", Resource: "deployments"},
			rules: `[{"patches":[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.28"}]}]`},
		{name: "bad JSON", rules: `[{`, want: "metadata.annotations[federation.kubernetes.io/overrides]: Invalid value"},
		{name: "a bad op", rules: `[{"labels":{"a":"b"}},{"patches":[{"op":"merge","path":"/spec"}]}]`,
			want: "metadata.annotations[federation.kubernetes.io/overrides][1].patches[0].op: Unsupported value"},
		{name: "the name", rules: `[{"labels":{"a":"b"}},{"patches":[{"op":"replace","path":"/metadata/name","value":"x"}]}]`,
			want: "metadata.annotations[federation.kubernetes.io/overrides][1].patches[0].path: Forbidden"},
		{name: "replicas", rules: `[{"patches":[{"op":"replace","path":"/spec/replicas","value":1}]}]`,
			want: "[0].patches[0].path: Forbidden: /spec/replicas"},
		{name: "a patch that does not apply", rules: `[{"patches":[{"op":"remove","path":"/spec/template/spec/containers/3"}]}]`,
			want: "metadata.annotations[federation.kubernetes.io/overrides][0].patches[0].path: Invalid value"},
		{name: "a failing test", rules: `[{"patches":[{"op":"test","path":"/spec/template/spec/containers/0/image","value":"httpd"}]}]`,
			want: "[0].patches[0].path: Invalid value"},
		{name: "status is not on a copy", rules: `[{"patches":[{"op":"test","path":"/status/replicas","value":3}]}]`,
			want: "[0].patches[0].path: Invalid value"},
		{name: "an unknown container", rules: `[{"container":"db","image":{"tag":"1"}}]`,
			want: "[0].container: Not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resource := deployments
			if tc.resource.Resource != "" {
				resource = tc.resource
			}
			err := validateObject(t, resource, deployment(tc.rules), nil)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsInvalid(err), "want a 422, got %v", err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestValidateOverridesOnUpdate(t *testing.T) {
	deployments := apps.Resource("deployments").WithVersion("v1")
	rules := `[{"patches":[{"op":"test","path":"/spec/template/spec/containers/0/image","value":"nginx:1.27"}]}]`
	old := deployment(rules)
	changed := deployment(rules)
	changed.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
	assert.Error(t, validateObject(t, deployments, changed, old), "the update breaks the rules")

	old.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
	planned := changed.DeepCopy()
	planned.Annotations["federation.kubernetes.io/replica-plan"] = `{"replicas":{"c1":3}}`
	assert.NoError(t, validateObject(t, deployments, planned, old), "rules that already did not apply refuse no other change")
}
