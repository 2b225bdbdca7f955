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
	"k8s.io/kubernetes/pkg/apis/apps"
	api "k8s.io/kubernetes/pkg/apis/core"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// adopter alone may update */federation-adoption with adoptionAuthorizer.
const adopter = "cluster-admin-alice"

type adoptionAuthorizer struct{ asked []authorizer.Attributes }

func (f *adoptionAuthorizer) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	f.asked = append(f.asked, a)
	if a.GetSubresource() == federationv1beta1.AdoptionSubresource && a.GetUser().GetName() != adopter {
		return authorizer.DecisionNoOpinion, "", nil
	}
	return authorizer.DecisionAllow, "", nil
}

func TestAdoptionNeedsItsRight(t *testing.T) {
	const (
		adoptKey  = federationv1beta1.ConflictResolutionAnnotation
		deleteKey = federationv1beta1.DeleteAdoptedAnnotation
	)
	local := map[string]string{federationv1beta1.LocalLabel: "true"}
	cm := func(labels map[string]string, annotations ...string) *api.ConfigMap {
		c := &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "x", Labels: labels, Annotations: map[string]string{}}}
		for i := 0; i < len(annotations); i += 2 {
			c.Annotations[annotations[i]] = annotations[i+1]
		}
		return c
	}
	configMaps := api.Resource("configmaps").WithVersion("v1")
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	oldDeployments := schema.GroupVersionResource{Group: "extensions", Version: "v1beta1", Resource: "deployments"}
	namespaces := api.Resource("namespaces").WithVersion("v1")
	deployment := &apps.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "x", Annotations: map[string]string{deleteKey: "true"}}}
	namespace := func(annotations map[string]string) *api.Namespace {
		return &api.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "payments", Annotations: annotations}}
	}
	cases := []struct {
		name        string
		user        string
		resource    schema.GroupVersionResource
		ns          string // of the request
		subresource string
		obj, old    runtime.Object
		// want, if set, are in the 403, and askedNamespace is the
		// namespace of the authorizer's question.
		want           []string
		askedNamespace string
	}{
		{name: "a tenant asks to adopt a ConfigMap", obj: cm(nil, adoptKey, "adopt"),
			want:           []string{`configmaps "x" is forbidden: the annotation federation.kubernetes.io/conflict-resolution: "adopt" takes over member objects of its name that the federation did not create: user "alice" may not update configmaps/federation-adoption`},
			askedNamespace: "team-a"},
		{name: "a tenant asks to delete adopted copies of a Deployment", resource: deployments, obj: deployment,
			want:           []string{`the annotation federation.kubernetes.io/delete-adopted-copies: "true" makes deleting the object delete the member objects it took over: user "alice" may not update deployments.apps/federation-adoption`},
			askedNamespace: "team-a"},
		{name: "through extensions/v1beta1", resource: oldDeployments, obj: deployment,
			want: []string{`deployments.extensions/federation-adoption`}, askedNamespace: "team-a"},
		{name: "both at once", obj: cm(nil, adoptKey, "adopt", deleteKey, "true"),
			want: []string{`conflict-resolution: "adopt" takes over`, `, and the annotation federation.kubernetes.io/delete-adopted-copies: "true"`}, askedNamespace: "team-a"},
		{name: "by an update", obj: cm(nil, adoptKey, "adopt"), old: cm(nil, adoptKey, "abort"),
			want: []string{"conflict-resolution"}, askedNamespace: "team-a"},
		{name: "through status", subresource: "status", obj: cm(nil, adoptKey, "adopt"), old: cm(nil),
			want: []string{"conflict-resolution"}, askedNamespace: "team-a"},
		{name: "by making a local ConfigMap propagated", obj: cm(nil, adoptKey, "adopt"), old: cm(local, adoptKey, "adopt"),
			want: []string{"conflict-resolution"}, askedNamespace: "team-a"},
		{name: "a Namespace, whose right is cluster-wide", resource: namespaces, ns: "", obj: namespace(map[string]string{adoptKey: "adopt"}),
			want: []string{"namespaces/federation-adoption"}},
		{name: "a Namespace's update, whose request carries its name as namespace", resource: namespaces, ns: "payments",
			obj: namespace(map[string]string{adoptKey: "adopt"}), old: namespace(nil), want: []string{"namespaces/federation-adoption"}},

		{name: "one who holds the right", user: adopter, obj: cm(nil, adoptKey, "adopt", deleteKey, "true")},
		{name: "abort", obj: cm(nil, adoptKey, "abort", deleteKey, "false")},
		{name: "an update that keeps it", obj: cm(nil, adoptKey, "adopt", "other", "changed"), old: cm(nil, adoptKey, "adopt")},
		{name: "an update that lowers it", obj: cm(nil, adoptKey, "abort", deleteKey, "false"), old: cm(nil, adoptKey, "adopt", deleteKey, "true")},
		{name: "an update that removes it", obj: cm(nil), old: cm(nil, adoptKey, "adopt", deleteKey, "true")},
		{name: "a local ConfigMap", obj: cm(local, adoptKey, "adopt")},
		{name: "in a never-propagated namespace", ns: "kube-system", obj: cm(nil, adoptKey, "adopt")},
		{name: "the scale subresource", resource: deployments, subresource: "scale", obj: deployment},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			authz := &adoptionAuthorizer{}
			p := New()
			p.SetAuthorizer(authz)
			resource, ns, who, op := configMaps, "team-a", "alice", admission.Create
			if c.resource != (schema.GroupVersionResource{}) {
				resource, ns = c.resource, c.ns
				if resource != namespaces {
					ns = "team-a"
				}
			}
			if c.ns != "" {
				ns = c.ns
			}
			if c.user != "" {
				who = c.user
			}
			if c.old != nil {
				op = admission.Update
			}
			attrs := admission.NewAttributesRecord(c.obj, c.old, schema.GroupVersionKind{}, ns, "x", resource, c.subresource, op, nil, false,
				&user.DefaultInfo{Name: who})
			err := p.Validate(context.Background(), attrs, nil)
			if len(c.want) == 0 {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsForbidden(err), "want a 403, got %v", err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
			require.Len(t, authz.asked, 1)
			asked := authz.asked[0]
			assert.Equal(t, "update", asked.GetVerb())
			assert.Equal(t, resource.Group, asked.GetAPIGroup())
			assert.Equal(t, resource.Resource, asked.GetResource())
			assert.Equal(t, federationv1beta1.AdoptionSubresource, asked.GetSubresource())
			assert.Equal(t, c.askedNamespace, asked.GetNamespace())
			assert.Equal(t, "x", asked.GetName())
			assert.True(t, asked.IsResourceRequest())
		})
	}
}
