package federationannotations

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/kubernetes/pkg/apis/apps"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/federation-v1/federation/pkg/overrides"
)

// create validates the creation of obj, of that kind and resource.
func create(obj runtime.Object, kind schema.GroupVersionKind, resource schema.GroupVersionResource) error {
	attrs := admission.NewAttributesRecord(obj, nil, kind, "ns", "web", resource, "", admission.Create,
		&metav1.CreateOptions{}, false, nil)
	return New().Validate(context.Background(), attrs, nil)
}

func assert422(t *testing.T, err error, want string) {
	t.Helper()
	require.Error(t, err)
	require.True(t, apierrors.IsInvalid(err), "want a 422, got %v", err)
	assert.EqualValues(t, http.StatusUnprocessableEntity, err.(apierrors.APIStatus).Status().Code)
	assert.Contains(t, err.Error(), want)
}

func TestOverridesMayNotChangeProtectedFields(t *testing.T) {
	deployments := apps.Resource("deployments").WithVersion("v1")
	deploymentKind := apps.Kind("Deployment").WithVersion("v1")
	withAccount := func(rules string) *apps.Deployment {
		d := deployment(rules)
		d.Spec.Template.Spec.ServiceAccountName = "builder"
		return d
	}

	err := create(withAccount(`[{"clusters":["c2"],"patches":[{"op":"replace","path":"/spec/template","value":{"spec":{"serviceAccountName":"admin","containers":[{"name":"app","image":"nginx:1.27"}]}}}]}]`),
		deploymentKind, deployments)
	assert422(t, err, "metadata.annotations[federation.kubernetes.io/overrides][0]: Forbidden: an override may not change spec.template.spec.serviceAccountName: "+
		"it is checked at the federation on the object itself (set it there)")

	err = create(withAccount(`[{"labels":{"a":"b"}},{"clusters":["c2"],"patches":[{"op":"add","path":"/spec/template/spec/serviceAccount","value":"admin"}]}]`),
		deploymentKind, deployments)
	assert422(t, err, "[1]: Forbidden: an override may not change spec.template.spec.serviceAccount: ")

	assert.NoError(t, create(withAccount(`[{"clusters":["c2"],"image":{"tag":"1.28"},"env":[{"name":"A","value":"1"}],
		"patches":[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.29"}]}]`), deploymentKind, deployments),
		"a harmless override of the same object")

	secret := &api.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Annotations: map[string]string{
			api.ServiceAccountNameKey: "builder",
			overrides.Annotation:      `[{"clusters":["c2"],"annotations":{"kubernetes.io/service-account.name":"admin"}}]`,
		}},
		Type: api.SecretTypeServiceAccountToken,
	}
	err = create(secret, api.SchemeGroupVersion.WithKind("Secret"), api.SchemeGroupVersion.WithResource("secrets").GroupResource().WithVersion("v1"))
	assert422(t, err, "[0]: Forbidden: an override may not change metadata.annotations[kubernetes.io/service-account.name]: ")
}

func TestOverridesBounded(t *testing.T) {
	deployments := apps.Resource("deployments").WithVersion("v1")
	rules := make([]string, 30)
	for i := range rules {
		rules[i] = fmt.Sprintf(`{"patches":[{"op":"copy","from":"/spec/template","path":"/spec/template/metadata/labels/x%d"}]}`, i)
	}
	d := deployment("[" + strings.Join(rules, ",") + "]")
	d.Spec.Template.Labels = map[string]string{"app": "web"}
	start := time.Now()
	err := create(d, apps.Kind("Deployment").WithVersion("v1"), deployments)
	assert422(t, err, "/spec/template/metadata/labels/x")
	assert.Contains(t, err.Error(), "bytes of JSON, over the limit of 1048576 bytes (1 MiB) an override may make it")
	assert.Less(t, time.Since(start), 20*time.Second, "refused quickly (unbounded, 30 doublings would not finish)")

	d = deployment("[" + strings.Repeat(`{"labels":{"a":"b"}},`, overrides.MaxRules) + `{"labels":{"a":"b"}}]`)
	assert422(t, create(d, apps.Kind("Deployment").WithVersion("v1"), deployments),
		"metadata.annotations[federation.kubernetes.io/overrides]: Too many: 101: must have at most 100 items")
}
