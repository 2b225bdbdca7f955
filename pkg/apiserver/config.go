// Package apiserver assembles the federation API server from
// k8s.io/apiserver and Kubernetes' own registries: the served groups and
// resources, their storage, authentication, admission and OpenAPI.
package apiserver

import (
	"context"
	"fmt"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	rbacrest "k8s.io/kubernetes/pkg/registry/rbac/rest"
	netutils "k8s.io/utils/net"

	federationinformers "github.com/federation-v1/federation/pkg/generated/informers/externalversions"
	"github.com/federation-v1/federation/pkg/memberproxy"
	servicestore "github.com/federation-v1/federation/pkg/registry/core/service/storage"
	"github.com/federation-v1/federation/pkg/serviceaccounttoken"
	"github.com/federation-v1/federation/pkg/tunnel"
)

// Config is the configuration of the federation API server.
type Config struct {
	// GenericConfig configures the generic server: serving, authentication,
	// authorization, admission, storage and OpenAPI.
	GenericConfig *genericapiserver.RecommendedConfig
	// EventTTL is how long events are kept.
	EventTTL time.Duration
	// ServiceClusterIPRange is where federated Services get their virtual
	// cluster IPs from; its first address is default/kubernetes'.
	ServiceClusterIPRange *net.IPNet
	// Informers watch this server through its loopback client for the
	// admission plugins (NamespaceLifecycle); they start once it serves.
	Informers informers.SharedInformerFactory
	// FederationInformers watch this server's federation/v1beta1 Clusters
	// for the FederationFinalizer admission plugin.
	FederationInformers federationinformers.SharedInformerFactory
	// RuleResolver lists a user's rules for SelfSubjectRulesReview; it
	// comes with the authorizer (AuthorizationConfig.ApplyTo).
	RuleResolver authorizer.RuleResolver
	// DirectAuthorizer is the authorizer without the members' proxy
	// deferral (Authorizers.Direct), for the proxy.
	DirectAuthorizer authorizer.Authorizer
	// FederationName is the federation's name, as the controller manager's
	// --federation-name: the labels of member namespaces it created carry it.
	FederationName string
	// APIExtensions serves CustomResourceDefinitions and custom resources
	// behind the federation's own groups (NewAPIExtensionsConfig); nil
	// serves none.
	APIExtensions *apiextensionsapiserver.Config
	// ServiceAccountTokens issues and verifies the federation's
	// service-account tokens: serviceaccounts/token, and the legacy token
	// Secrets its elected tokens controller fills. Nil serves neither.
	ServiceAccountTokens *serviceaccounttoken.Tokens
}

// completedConfig is a Config whose defaults have been filled in.
type completedConfig struct {
	generic  genericapiserver.CompletedConfig
	eventTTL time.Duration
	// serviceRange is ServiceClusterIPRange.
	serviceRange *net.IPNet
	informers    informers.SharedInformerFactory
	// federationInformers may be nil.
	federationInformers federationinformers.SharedInformerFactory
	ruleResolver        authorizer.RuleResolver
	directAuthorizer    authorizer.Authorizer
	federationName      string
	// apiExtensions may be nil.
	apiExtensions *apiextensionsapiserver.Config
	// tokens may be nil.
	tokens *serviceaccounttoken.Tokens
}

// CompletedConfig can only be made by Config.Complete, and is what New needs.
type CompletedConfig struct {
	*completedConfig
}

// Complete fills in the defaults of the configuration.
func (c *Config) Complete() CompletedConfig {
	ttl := c.EventTTL
	if ttl == 0 {
		ttl = time.Hour
	}
	serviceRange := c.ServiceClusterIPRange
	if serviceRange == nil {
		_, serviceRange, _ = netutils.ParseCIDRSloppy(servicestore.DefaultClusterIPRange)
	}
	return CompletedConfig{&completedConfig{
		generic:             c.GenericConfig.Complete(),
		eventTTL:            ttl,
		serviceRange:        serviceRange,
		informers:           c.Informers,
		federationInformers: c.FederationInformers,
		ruleResolver:        c.RuleResolver,
		directAuthorizer:    c.DirectAuthorizer,
		federationName:      c.FederationName,
		apiExtensions:       c.APIExtensions,
		tokens:              c.ServiceAccountTokens,
	}}
}

// Server is the federation API server.
type Server struct {
	// GenericAPIServer serves the API.
	GenericAPIServer *genericapiserver.GenericAPIServer
}

// New creates the server and installs every served API group.
func (c CompletedConfig) New() (*Server, error) {
	// Deletions of every federated type are recorded in tombstones, also
	// those of Roles and RoleBindings, served with the access groups, and
	// of custom resources, served by the apiextensions server.
	tombstones := &tombstoneWriter{now: time.Now}
	delegate := genericapiserver.NewEmptyDelegate()
	var ext *apiextensionsapiserver.CustomResourceDefinitions
	if c.apiExtensions != nil {
		var err error
		if ext, err = withCustomResourceDeletions(c.apiExtensions, tombstones).Complete().New(delegate); err != nil {
			return nil, fmt.Errorf("creating the custom resources' API server: %w", err)
		}
		delegate = ext.GenericAPIServer
	}
	generic, err := c.generic.New("federation-apiserver", delegate)
	if err != nil {
		return nil, fmt.Errorf("creating the generic API server: %w", err)
	}
	if ext != nil {
		if err := addCRDOpenAPIHook(generic, ext, c.generic.OpenAPIV3Config); err != nil {
			return nil, err
		}
	}
	serviceIPs, err := servicestore.NewClusterIPAllocator(c.generic.RESTOptionsGetter, c.serviceRange)
	if err != nil {
		return nil, err
	}
	hub := tunnel.NewHub()
	proxy, err := c.memberProxy(hub)
	if err != nil {
		return nil, err
	}
	legacy, groups, err := apiGroups(c.generic.RESTOptionsGetter, uint64(c.eventTTL.Seconds()), serviceIPs, c.tokens, tombstones, hub, proxy)
	if err != nil {
		return nil, err
	}
	if err := generic.AddPostStartHook("close-gone-agent-tunnels", func(ctx genericapiserver.PostStartHookContext) error {
		go hub.Run(ctx)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("adding the agent tunnels' post-start hook: %w", err)
	}
	if err := generic.InstallLegacyAPIGroup(genericapiserver.DefaultLegacyAPIPrefix, legacy); err != nil {
		return nil, fmt.Errorf("installing the core API group: %w", err)
	}
	access, err := accessGroups(ResourceConfig(), c.generic.RESTOptionsGetter,
		c.generic.Authentication.Authenticator, c.generic.Authorization.Authorizer, c.ruleResolver, tombstones)
	if err != nil {
		return nil, err
	}
	groups = append(groups, access...)
	if err := generic.InstallAPIGroups(groups...); err != nil {
		return nil, fmt.Errorf("installing the API groups: %w", err)
	}
	if err := generic.AddPostStartHook(rbacrest.PostStartHookName, bootstrapPolicy().EnsureRBACPolicy()); err != nil {
		return nil, fmt.Errorf("adding the RBAC bootstrap policy post-start hook: %w", err)
	}
	if err := generic.AddPostStartHook("create-system-namespaces", systemNamespacesHook); err != nil {
		return nil, fmt.Errorf("adding the system namespaces post-start hook: %w", err)
	}
	if err := addServiceIPRepairHook(generic, serviceIPs); err != nil {
		return nil, err
	}
	port := servingPort(c.generic.SecureServing)
	defaultService, err := kubernetesService(serviceIPs.CIDR(), port)
	if err != nil {
		return nil, err
	}
	// Namespace deletion, ClusterRole aggregation and the keeper of
	// default/kubernetes: in one of the federation's apiservers at a time.
	elected, err := newElectedControllers(defaultService, port, c.tokens)
	if err != nil {
		return nil, err
	}
	if err := elected.addHooks(generic); err != nil {
		return nil, err
	}
	if c.informers != nil {
		err := generic.AddPostStartHook("start-federation-informers", func(ctx genericapiserver.PostStartHookContext) error {
			c.informers.Start(ctx.Done())
			if c.federationInformers != nil {
				c.federationInformers.Start(ctx.Done())
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("adding the informer post-start hook: %w", err)
		}
	}
	return &Server{GenericAPIServer: generic}, nil
}

// Run serves until ctx is done.
func (s *Server) Run(ctx context.Context) error {
	return s.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}

// memberProxy serves clusters/NAME/proxy; it reads members' credentials
// through the loopback client.
func (c CompletedConfig) memberProxy(hub *tunnel.Hub) (*memberproxy.Proxy, error) {
	client, err := kubernetes.NewForConfig(c.generic.LoopbackClientConfig)
	if err != nil {
		return nil, fmt.Errorf("creating the members' proxy's loopback client: %w", err)
	}
	secrets := func(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
		return client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	}
	authz := c.directAuthorizer
	if authz == nil {
		authz = c.generic.Authorization.Authorizer
	}
	name := c.federationName
	if name == "" {
		name = DefaultFederationName
	}
	return memberproxy.New(name, authz, secrets, hub), nil
}

// DefaultFederationName is --federation-name's default, as the controller manager's.
const DefaultFederationName = "federation"
