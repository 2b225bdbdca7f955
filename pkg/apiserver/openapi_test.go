package apiserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	federationopenapi "github.com/federation-v1/federation/pkg/generated/openapi"
)

func TestFriendlyName(t *testing.T) {
	assert.Equal(t, "io.k8s.api.core.v1.PodTemplateSpec", friendlyName("k8s.io/api/core/v1.PodTemplateSpec"))
	assert.Equal(t, "io.k8s.api.apps.v1.Deployment", friendlyName("io.k8s.api.apps.v1.Deployment"), "model names stay")
}

// TestOpenAPIDefinitions checks that the dependencies of the definitions
// we generate resolve to definitions, so that the server can build its
// OpenAPI models.
func TestOpenAPIDefinitions(t *testing.T) {
	ref := func(name string) spec.Ref { return spec.MustCreateRef("#/definitions/" + name) }
	defs := openAPIDefinitions(ref)
	for _, name := range []string{
		"com.github.federation-v1.federation.pkg.apis.federation.v1beta1.Cluster",
		"io.k8s.api.extensions.v1beta1.Deployment",
		"io.k8s.api.apps.v1.Deployment",
	} {
		_, ok := defs[name]
		assert.True(t, ok, "no definition %s", name)
	}
	for name := range federationopenapi.GetOpenAPIDefinitions(ref) {
		def, ok := defs[friendlyName(name)]
		if !assert.True(t, ok, "no definition %s", friendlyName(name)) {
			continue
		}
		for _, dep := range def.Dependencies {
			_, ok := defs[dep]
			assert.True(t, ok, "dependency %s of %s has no definition", dep, name)
		}
	}
}

func TestExternalTypes(t *testing.T) {
	for gvk := range externalTypes(legacyscheme.Scheme).AllKnownTypes() {
		assert.NotEqual(t, "__internal", gvk.Version, "%v", gvk)
	}
}
