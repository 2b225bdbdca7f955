package apiserver

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/kubeapiserver"

	"github.com/federation-v1/federation/pkg/apis/federation"
)

// NewStorageFactory returns the storage factory of the served resources,
// configured like kube-apiserver's: resources are stored in their
// preferred version (extensions/v1beta1 objects as apps/v1 and
// networking.k8s.io/v1), in protobuf where the type supports it. Clusters
// have no protobuf encoding and are stored as JSON.
func NewStorageFactory(etcd *genericoptions.EtcdOptions, version basecompatibility.EffectiveVersion) (*serverstorage.DefaultStorageFactory, error) {
	config := kubeapiserver.NewStorageFactoryConfigEffectiveVersion(version)
	config.APIResourceConfig = ResourceConfig()
	factory, err := config.Complete(etcd).New()
	if err != nil {
		return nil, fmt.Errorf("creating the storage factory: %w", err)
	}
	factory.SetSerializer(federation.Resource("clusters"), runtime.ContentTypeJSON, legacyscheme.Codecs)
	return factory, nil
}

// ResourceConfig enables the group/versions the server serves.
func ResourceConfig() *serverstorage.ResourceConfig {
	c := serverstorage.NewResourceConfig()
	c.EnableVersions(servedGroupVersions()...)
	c.EnableVersions(accessGroupVersions...)
	return c
}
