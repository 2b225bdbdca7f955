package apiserver

import (
	"reflect"
	"strings"

	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	kubeopenapi "k8s.io/kubernetes/pkg/generated/openapi"

	federationopenapi "github.com/federation-v1/federation/pkg/generated/openapi"
)

// openAPIDefinitions merges Kubernetes' generated definitions with ours
// (the federation group and extensions/v1beta1, which Kubernetes no longer
// generates).
//
// Kubernetes names its definitions by model name (io.k8s.api.core.v1.Pod).
// Our generator only knows the model names of the packages it generated, so
// its other names and references are Go type names
// (k8s.io/api/core/v1.PodTemplateSpec): they are turned into the REST
// friendly names the scheme's definition namer uses for them.
func openAPIDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := kubeopenapi.GetOpenAPIDefinitions(ref)
	friendlyRef := func(name string) spec.Ref { return ref(friendlyName(name)) }
	for name, def := range federationopenapi.GetOpenAPIDefinitions(friendlyRef) {
		for i, dep := range def.Dependencies {
			def.Dependencies[i] = friendlyName(dep)
		}
		defs[friendlyName(name)] = def
	}
	return defs
}

// friendlyName turns a Go type name (it has a slash) into its REST friendly
// definition name, and leaves model names alone.
func friendlyName(name string) string {
	if !strings.Contains(name, "/") {
		return name
	}
	return util.ToRESTFriendlyName(name)
}

// ApplyOpenAPI configures OpenAPI v2 and v3 for every served type.
func ApplyOpenAPI(config *genericapiserver.Config, version string) {
	// The apiextensions scheme names the CRD types' definitions.
	namer := openapi.NewDefinitionNamer(externalTypes(legacyscheme.Scheme), apiextensionsapiserver.Scheme)
	config.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(openAPIDefinitions, namer)
	config.OpenAPIConfig.Info.Title = "Kubernetes Federation"
	config.OpenAPIConfig.Info.Version = version
	config.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openAPIDefinitions, namer)
	config.OpenAPIV3Config.Info.Title = "Kubernetes Federation"
	config.OpenAPIV3Config.Info.Version = version
}

// externalTypes returns a scheme of the external (versioned) types of
// scheme only. The federation types double as their internal version; named
// from the full scheme, their OpenAPI definitions would list a
// federation/__internal group-version-kind.
func externalTypes(scheme *runtime.Scheme) *runtime.Scheme {
	external := runtime.NewScheme()
	for gvk, t := range scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		if obj, ok := reflect.New(t).Interface().(runtime.Object); ok {
			external.AddKnownTypeWithName(gvk, obj)
		}
	}
	return external
}
