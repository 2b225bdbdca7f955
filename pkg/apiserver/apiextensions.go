package apiserver

import (
	"fmt"
	"strings"

	restful "github.com/emicklei/go-restful/v3"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	apiextensionsoptions "k8s.io/apiextensions-apiserver/pkg/cmd/server/options"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapiv3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	discoveryendpoint "k8s.io/apiserver/pkg/endpoints/discovery/aggregated"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/common/restfuladapter"
	"k8s.io/kube-openapi/pkg/handler3"
)

// The federation serves CustomResourceDefinitions and their custom
// resources with k8s.io/apiextensions-apiserver, placed in the delegation
// chain as kube-apiserver places it: the federation's own server handles
// its groups and hands every other path (apiextensions.k8s.io and the
// custom resources' groups) to the apiextensions server. Without the
// aggregator kube-apiserver puts in front, two of its jobs are done here:
// both servers share one aggregated discovery manager, so that the
// custom resources' groups are listed in /apis (kubectl reads aggregated
// discovery), and the CRDs' OpenAPI is merged into the federation's own
// /openapi/v2 and /openapi/v3 (kubectl explain).

// NewAPIExtensionsConfig returns the configuration of the apiextensions
// server: a copy of the federation's generic configuration (serving,
// authentication, authorization, admission, audit) with its own storage,
// in the same etcd under the same prefix (CRDs under
// apiextensions.k8s.io/customresourcedefinitions, custom resources under
// their group and resource). Call it once the generic configuration is
// complete but for Complete.
func NewAPIExtensionsConfig(generic *genericapiserver.RecommendedConfig, etcd *genericoptions.EtcdOptions) (*apiextensionsapiserver.Config, error) {
	if generic.AggregatedDiscoveryGroupManager == nil {
		generic.AggregatedDiscoveryGroupManager = discoveryendpoint.NewResourceManager("apis")
	}
	config := generic.Config
	config.PostStartHooks = map[string]genericapiserver.PostStartHookConfigEntry{}
	config.RESTOptionsGetter = nil

	etcdOptions := *etcd
	etcdOptions.StorageConfig.Codec = apiextensionsapiserver.Codecs.LegacyCodec(apiextensionsv1beta1.SchemeGroupVersion, apiextensionsv1.SchemeGroupVersion)
	// As kube-apiserver: CRDs are stored as v1beta1, the more compact.
	etcdOptions.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(apiextensionsv1beta1.SchemeGroupVersion,
		schema.GroupKind{Group: apiextensionsv1beta1.GroupName})
	// The federation's server already checks etcd.
	etcdOptions.SkipHealthEndpoints = true
	if err := etcdOptions.ApplyTo(&config); err != nil {
		return nil, fmt.Errorf("configuring the storage of custom resources: %w", err)
	}
	config.MergedResourceConfig = apiextensionsapiserver.DefaultAPIResourceConfigSource()
	return &apiextensionsapiserver.Config{
		GenericConfig: &genericapiserver.RecommendedConfig{
			Config:                config,
			SharedInformerFactory: generic.SharedInformerFactory,
		},
		ExtraConfig: apiextensionsapiserver.ExtraConfig{
			CRDRESTOptionsGetter: apiextensionsoptions.NewCRDRESTOptionsGetter(etcdOptions, config.ResourceTransformers, config.StorageObjectCountTracker),
			MasterCount:          1,
			// Conversion webhooks, as kube-apiserver's without a proxy.
			ServiceResolver:     webhook.NewDefaultServiceResolver(),
			AuthResolverWrapper: webhook.NewDefaultAuthenticationInfoResolverWrapper(nil, nil, config.LoopbackClientConfig, config.TracerProvider),
		},
	}, nil
}

// addCRDOpenAPIHook merges the CRDs' schemas into server's own OpenAPI
// documents, which are made when it starts (PrepareRun), as the
// apiextensions server does into its own; and lists their groups in its
// unaggregated discovery and in the controller manager's role
// (policy_customresources.go).
func addCRDOpenAPIHook(server *genericapiserver.GenericAPIServer, ext *apiextensionsapiserver.CustomResourceDefinitions, v3Config *common.OpenAPIV3Config) error {
	crds := ext.Informers.Apiextensions().V1().CustomResourceDefinitions()
	v2 := openapi.NewController(crds)
	v3 := openapiv3.NewController(crds)
	client, err := kubernetes.NewForConfig(server.LoopbackClientConfig)
	if err != nil {
		return fmt.Errorf("creating the loopback client of the custom resources' role: %w", err)
	}
	role := newCustomResourcesRoleWriter(client)
	groups, err := newCRDGroups(server.DiscoveryGroupManager, crds.Informer(), crds.Lister(), role)
	if err != nil {
		return err
	}
	err = server.AddPostStartHook("start-federation-crd-openapi", func(ctx genericapiserver.PostStartHookContext) error {
		go role.run(ctx)
		groups.sync()
		if server.StaticOpenAPISpec != nil && server.OpenAPIVersionedService != nil {
			go v2.Run(server.StaticOpenAPISpec, server.OpenAPIVersionedService, ctx.Done())
		}
		if server.OpenAPIV3VersionedService != nil {
			addAPIExtensionsOpenAPIV3(server.OpenAPIV3VersionedService, ext, v3Config)
			go v3.Run(server.OpenAPIV3VersionedService, ctx.Done())
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("adding the CRD OpenAPI post-start hook: %w", err)
	}
	return nil
}

// addAPIExtensionsOpenAPIV3 adds the apiextensions.k8s.io group's OpenAPI v3
// document (kubectl explain customresourcedefinitions), built from the
// apiextensions server's routes as that server builds its own.
func addAPIExtensionsOpenAPIV3(service *handler3.OpenAPIService, ext *apiextensionsapiserver.CustomResourceDefinitions, config *common.OpenAPIV3Config) {
	if config == nil {
		return
	}
	for _, ws := range ext.GenericAPIServer.Handler.GoRestfulContainer.RegisteredWebServices() {
		path := strings.TrimPrefix(ws.RootPath(), "/")
		if !strings.HasPrefix(path, "apis/"+apiextensionsv1.GroupName+"/") {
			continue
		}
		spec, err := builder3.BuildOpenAPISpecFromRoutes(restfuladapter.AdaptWebServices([]*restful.WebService{ws}), config)
		if err != nil {
			klog.ErrorS(err, "Building the OpenAPI v3 document of CustomResourceDefinitions", "path", path)
			continue
		}
		service.UpdateGroupVersion(path, spec)
	}
}
