package apiserver

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// scaleStorage is what the deployments/scale and replicasets/scale
// storages of Kubernetes implement.
type scaleStorage interface {
	rest.Storage
	rest.Getter
	rest.Updater
	rest.GroupVersionKindProvider
	rest.TableConvertor
}

// legacyScale serves a /scale subresource under extensions/v1beta1.
// Kubernetes' scale storages only know the managed-fields paths of the apps
// versions and exit the process (klog.Fatal) for any other request version,
// so the update is made as if it came through apps/v1, whose replicas
// field has the same path.
type legacyScale struct {
	scaleStorage
}

// Update updates the scale as an apps/v1 request would.
func (s legacyScale) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	if info, ok := genericapirequest.RequestInfoFrom(ctx); ok {
		apps := *info
		apps.APIGroup, apps.APIVersion = "apps", "v1"
		ctx = genericapirequest.WithRequestInfo(ctx, &apps)
	}
	return s.scaleStorage.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}
