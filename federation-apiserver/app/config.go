package app

import (
	"fmt"

	genericapiserver "k8s.io/apiserver/pkg/server"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/federation-v1/federation/pkg/admission/federationfinalizer"
	"github.com/federation-v1/federation/pkg/apiserver"
	"github.com/federation-v1/federation/pkg/generated/clientset/versioned"
	federationinformers "github.com/federation-v1/federation/pkg/generated/informers/externalversions"
	fedversion "github.com/federation-v1/federation/pkg/version"
)

// kubernetesVersion is the Kubernetes version whose API this server serves.
const kubernetesVersion = fedversion.Kubernetes

// Config turns completed, validated options into the server configuration.
func (o *Options) Config() (*apiserver.Config, error) {
	if err := o.selfSignedCert(); err != nil {
		return nil, err
	}
	serviceRange, err := o.serviceClusterIPRange()
	if err != nil {
		return nil, err
	}
	version := apiserver.NewEffectiveVersion(kubernetesVersion)
	generic := genericapiserver.NewRecommendedConfig(legacyscheme.Codecs)
	generic.EffectiveVersion = version
	generic.FeatureGate = utilfeature.DefaultFeatureGate
	apiserver.ApplyOpenAPI(&generic.Config, "v"+kubernetesVersion)
	generic.LongRunningFunc = apiserver.LongRunning

	if err := o.SecureServing.ApplyTo(&generic.SecureServing, &generic.LoopbackClientConfig); err != nil {
		return nil, fmt.Errorf("configuring HTTPS serving: %w", err)
	}
	if o.SecureServing.PermitPortSharing {
		if err := ownLoopback(generic.SecureServing, generic.LoopbackClientConfig); err != nil {
			return nil, err
		}
	}
	client, err := kubernetes.NewForConfig(generic.LoopbackClientConfig)
	if err != nil {
		return nil, fmt.Errorf("creating the loopback client: %w", err)
	}
	if err := o.Authentication.WatchBootstrapTokens(&generic.Config, client); err != nil {
		return nil, err
	}
	tokens, err := o.serviceAccountTokens()
	if err != nil {
		return nil, err
	}
	o.Authentication.ServiceAccountTokens = tokens
	o.Authentication.ServiceAccountSecrets = client.CoreV1()
	if err := o.Authentication.ApplyTo(&generic.Config); err != nil {
		return nil, err
	}
	factoryInformers := informers.NewSharedInformerFactory(client, 0)
	authorizers, err := o.Authorization.ApplyTo(&generic.Config, factoryInformers)
	if err != nil {
		return nil, err
	}

	factory, err := apiserver.NewStorageFactory(o.Etcd, version)
	if err != nil {
		return nil, err
	}
	if err := o.Etcd.ApplyWithStorageFactoryTo(factory, &generic.Config); err != nil {
		return nil, fmt.Errorf("configuring etcd storage: %w", err)
	}
	if err := o.Audit.ApplyTo(&generic.Config); err != nil {
		return nil, fmt.Errorf("configuring the audit log: %w", err)
	}

	dynamicClient, err := dynamic.NewForConfig(generic.LoopbackClientConfig)
	if err != nil {
		return nil, fmt.Errorf("creating the loopback dynamic client: %w", err)
	}
	federationClient, err := versioned.NewForConfig(generic.LoopbackClientConfig)
	if err != nil {
		return nil, fmt.Errorf("creating the loopback federation client: %w", err)
	}
	federationInformers := federationinformers.NewSharedInformerFactory(federationClient, 0)
	if err := o.Admission.ApplyTo(&generic.Config, factoryInformers, client, dynamicClient, generic.FeatureGate, version,
		federationfinalizer.PluginInitializer{Informers: federationInformers}); err != nil {
		return nil, fmt.Errorf("configuring admission: %w", err)
	}
	apiExtensions, err := apiserver.NewAPIExtensionsConfig(generic, o.Etcd)
	if err != nil {
		return nil, err
	}
	return &apiserver.Config{
		GenericConfig:         generic,
		APIExtensions:         apiExtensions,
		EventTTL:              o.EventTTL,
		ServiceClusterIPRange: serviceRange,
		Informers:             factoryInformers,
		FederationInformers:   federationInformers,
		RuleResolver:          authorizers.Rules,
		DirectAuthorizer:      authorizers.Direct,
		FederationName:        o.FederationName,
		ServiceAccountTokens:  tokens,
	}, nil
}
