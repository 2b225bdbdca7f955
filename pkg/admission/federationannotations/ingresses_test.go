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
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	api "k8s.io/kubernetes/pkg/apis/core"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/serviceingresses"
)

// controllerManager is the only user allowed to update
// services/federation-ingresses by fakeAuthorizer.
const controllerManager = "system:federation-controller-manager"

// fakeAuthorizer allows everything, except services/federation-ingresses
// to anyone but the controller manager; it records what it was asked.
type fakeAuthorizer struct {
	asked []authorizer.Attributes
}

func (f *fakeAuthorizer) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	f.asked = append(f.asked, a)
	if a.GetResource() == "services" && a.GetSubresource() == serviceingresses.Subresource && a.GetUser().GetName() != controllerManager {
		return authorizer.DecisionNoOpinion, "no RBAC policy matched", nil
	}
	return authorizer.DecisionAllow, "", nil
}

func svc(ingresses *string) *api.Service {
	s := &api.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web"}}
	if ingresses != nil {
		s.Annotations = map[string]string{federationv1beta1.ServiceIngressesAnnotation: *ingresses}
	}
	return s
}

func TestServiceIngressesAreTheControllerManagers(t *testing.T) {
	evil := `{"items":[{"cluster":"cluster1","items":[{"ip":"203.0.113.7"}]}]}`
	good := `{"items":[{"cluster":"cluster1","items":[{"ip":"10.0.0.1"}]}]}`
	services := api.Resource("services").WithVersion("v1")
	cases := []struct {
		name        string
		user        string
		op          admission.Operation
		subresource string
		resource    schema.GroupVersionResource
		old, obj    runtime.Object
		forbidden   bool
	}{
		{name: "a tenant creates a Service with the annotation", user: "tenant", op: admission.Create,
			obj: svc(&evil), forbidden: true},
		{name: "a tenant sets it on an update", user: "tenant", op: admission.Update,
			old: svc(nil), obj: svc(&evil), forbidden: true},
		{name: "a tenant changes it", user: "tenant", op: admission.Update,
			old: svc(&good), obj: svc(&evil), forbidden: true},
		{name: "a tenant changes it through status", user: "tenant", op: admission.Update, subresource: "status",
			old: svc(&good), obj: svc(&evil), forbidden: true},
		{name: "a tenant sets it to empty", user: "tenant", op: admission.Update,
			old: svc(&good), obj: svc(new(string)), forbidden: true},
		{name: "a tenant updates the Service and keeps it", user: "tenant", op: admission.Update,
			old: svc(&good), obj: svc(&good)},
		{name: "a tenant removes it", user: "tenant", op: admission.Update,
			old: svc(&good), obj: svc(nil)},
		{name: "a tenant creates a Service without it", user: "tenant", op: admission.Create, obj: svc(nil)},
		{name: "the controller manager writes it", user: controllerManager, op: admission.Update,
			old: svc(&good), obj: svc(&evil)},
		{name: "another resource may carry the key", user: "tenant", op: admission.Create,
			resource: api.Resource("configmaps").WithVersion("v1"),
			obj:      &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{federationv1beta1.ServiceIngressesAnnotation: evil}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			authz := &fakeAuthorizer{}
			p := New()
			p.SetAuthorizer(authz)
			require.NoError(t, p.ValidateInitialization())
			resource := services
			if c.resource != (schema.GroupVersionResource{}) {
				resource = c.resource
			}
			attrs := admission.NewAttributesRecord(c.obj, c.old, schema.GroupVersionKind{Kind: "Service"}, "team-a", "web",
				resource, c.subresource, c.op, nil, false, &user.DefaultInfo{Name: c.user})
			err := p.Validate(context.Background(), attrs, nil)
			if !c.forbidden {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsForbidden(err), "want a 403, got %v", err)
			assert.Contains(t, err.Error(), federationv1beta1.ServiceIngressesAnnotation)
			require.Len(t, authz.asked, 1)
			asked := authz.asked[0]
			assert.Equal(t, "update", asked.GetVerb())
			assert.Equal(t, "services", asked.GetResource())
			assert.Equal(t, serviceingresses.Subresource, asked.GetSubresource())
			assert.Equal(t, "team-a", asked.GetNamespace())
			assert.Equal(t, "web", asked.GetName())
			assert.True(t, asked.IsResourceRequest())
		})
	}
}

func TestWithoutAnAuthorizerTheAnnotationIsRefused(t *testing.T) {
	p := New()
	assert.Error(t, p.ValidateInitialization())
	evil := `{"items":[]}`
	attrs := admission.NewAttributesRecord(svc(&evil), nil, schema.GroupVersionKind{Kind: "Service"}, "team-a", "web",
		api.Resource("services").WithVersion("v1"), "", admission.Create, nil, false, &user.DefaultInfo{Name: "admin"})
	err := p.Validate(context.Background(), attrs, nil)
	assert.True(t, apierrors.IsForbidden(err), "want a 403, got %v", err)
}
