package apiserver

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/kubeapiserver"

	"github.com/federation-v1/federation/pkg/apis/federation"
	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// NewStorageFactory returns the storage factory of the served resources,
// configured like kube-apiserver's: resources are stored in their
// preferred version (extensions/v1beta1 objects as apps/v1 and
// networking.k8s.io/v1), in protobuf where the type supports it. Clusters
// have no protobuf encoding and are stored as JSON.
func NewStorageFactory(etcd *genericoptions.EtcdOptions, version basecompatibility.EffectiveVersion) (*serverstorage.DefaultStorageFactory, error) {
	resourceConfig := serverstorage.NewResourceConfig()
	resourceConfig.EnableVersions(
		corev1.SchemeGroupVersion,
		appsv1.SchemeGroupVersion,
		extensionsv1beta1.SchemeGroupVersion,
		networkingv1.SchemeGroupVersion,
		batchv1.SchemeGroupVersion,
		autoscalingv1.SchemeGroupVersion,
		autoscalingv2.SchemeGroupVersion,
		federationv1beta1.SchemeGroupVersion,
	)
	config := kubeapiserver.NewStorageFactoryConfigEffectiveVersion(version)
	config.APIResourceConfig = resourceConfig
	factory, err := config.Complete(etcd).New()
	if err != nil {
		return nil, fmt.Errorf("creating the storage factory: %w", err)
	}
	factory.SetSerializer(federation.Resource("clusters"), runtime.ContentTypeJSON, legacyscheme.Codecs)
	return factory, nil
}
