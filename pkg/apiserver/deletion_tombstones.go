package apiserver

import (
	"context"
	"fmt"
	"maps"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/apis/autoscaling"
	api "k8s.io/kubernetes/pkg/apis/core"
	daemonsetstore "k8s.io/kubernetes/pkg/registry/apps/daemonset/storage"
	deploymentstore "k8s.io/kubernetes/pkg/registry/apps/deployment/storage"
	replicasetstore "k8s.io/kubernetes/pkg/registry/apps/replicaset/storage"
	statefulsetstore "k8s.io/kubernetes/pkg/registry/apps/statefulset/storage"
	hpastore "k8s.io/kubernetes/pkg/registry/autoscaling/horizontalpodautoscaler/storage"
	cronjobstore "k8s.io/kubernetes/pkg/registry/batch/cronjob/storage"
	jobstore "k8s.io/kubernetes/pkg/registry/batch/job/storage"
	configmapstore "k8s.io/kubernetes/pkg/registry/core/configmap/storage"
	limitrangestore "k8s.io/kubernetes/pkg/registry/core/limitrange/storage"
	pvcstore "k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim/storage"
	resourcequotastore "k8s.io/kubernetes/pkg/registry/core/resourcequota/storage"
	secretstore "k8s.io/kubernetes/pkg/registry/core/secret/storage"
	serviceaccountstore "k8s.io/kubernetes/pkg/registry/core/serviceaccount/storage"
	ingressstore "k8s.io/kubernetes/pkg/registry/networking/ingress/storage"
	networkpolicystore "k8s.io/kubernetes/pkg/registry/networking/networkpolicy/storage"
	pdbstore "k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget/storage"
	rolestore "k8s.io/kubernetes/pkg/registry/rbac/role/storage"
	rolebindingstore "k8s.io/kubernetes/pkg/registry/rbac/rolebinding/storage"

	"github.com/federation-v1/federation/pkg/federatedtypes"
	servicestore "github.com/federation-v1/federation/pkg/registry/core/service/storage"
	"github.com/federation-v1/federation/pkg/tombstone"
)

// tombstoneWriter writes tombstones in process, through the server's own
// ConfigMap storage: a deletion never depends on a loopback HTTP call.
type tombstoneWriter struct {
	configMaps rest.Creater
	now        func() time.Time
}

// write records the deletion of obj, of resource gr, in its tombstone. One
// already there (the object's deletion asked again) is kept.
func (w *tombstoneWriter) write(ctx context.Context, gr schema.GroupResource, obj runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	r := tombstone.New(gr, m, w.now())
	switch o := obj.(type) {
	case *api.Secret:
		r.SecretType = string(o.Type)
	case *autoscaling.HorizontalPodAutoscaler:
		r.ScaleTarget = &tombstone.ScaleTarget{Kind: o.Spec.ScaleTargetRef.Kind, Name: o.Spec.ScaleTargetRef.Name}
	}
	if w.configMaps == nil {
		return apierrors.NewInternalError(errTombstone(gr, m, fmt.Errorf("no ConfigMap storage")))
	}
	cm := &api.ConfigMap{ObjectMeta: r.Meta(), Data: r.Data()}
	// The request is the object's delete: the ConfigMap storage is told
	// of its own create.
	ctx = genericapirequest.WithNamespace(ctx, tombstone.Namespace)
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: "create", APIVersion: "v1", Resource: "configmaps", Namespace: tombstone.Namespace, Name: cm.Name,
	})
	_, err = w.configMaps.Create(ctx, cm, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return apierrors.NewInternalError(errTombstone(gr, m, err))
	}
	return nil
}

// withTombstones returns the stores of a federated type as served under one
// group/version, its main storage recording deletions in tombstones
// written by w; Namespaces' as they are.
func withTombstones(t *federatedtypes.Type, stores map[string]rest.Storage, w *tombstoneWriter) (map[string]rest.Storage, error) {
	if t == federatedtypes.Namespaces {
		return stores, nil
	}
	name := t.Resource.Resource
	s, ok := stores[name]
	if !ok {
		return nil, fmt.Errorf("no storage of %s to record its deletions", name)
	}
	store := genericStore(s)
	deleter, isDeleter := s.(rest.GracefulDeleter)
	if store == nil || !isDeleter {
		return nil, fmt.Errorf("the storage of %s (%T) is not a known generic store: its deletions cannot be recorded", name, s)
	}
	wrapped := &tombstoning{Store: store, deleter: deleter, resource: t.Resource.GroupResource(), writer: w}
	if p, ok := s.(rest.ShortNamesProvider); ok {
		wrapped.shortNames = p.ShortNames()
	}
	if p, ok := s.(rest.CategoriesProvider); ok {
		wrapped.categories = p.Categories()
	}
	out := maps.Clone(stores)
	out[name] = wrapped
	return out, nil
}

// genericStore is the generic store of a federated type's storage (as
// served in its own group, or as a legacy alias), or nil.
func genericStore(s rest.Storage) *registry.Store {
	switch st := s.(type) {
	case *configmapstore.REST:
		return st.Store
	case *secretstore.REST:
		return st.Store
	case *servicestore.REST:
		return st.Store
	case *deploymentstore.REST:
		return st.Store
	case *replicasetstore.REST:
		return st.Store
	case *daemonsetstore.REST:
		return st.Store
	case *ingressstore.REST:
		return st.Store
	case *jobstore.REST:
		return st.Store
	case *hpastore.REST:
		return st.Store
	case *serviceaccountstore.REST:
		return st.Store
	case *statefulsetstore.REST:
		return st.Store
	case *cronjobstore.REST:
		return st.Store
	case *pdbstore.REST:
		return st.Store
	case *networkpolicystore.REST:
		return st.Store
	case *pvcstore.REST:
		return st.Store
	case *limitrangestore.REST:
		return st.Store
	case *resourcequotastore.REST:
		return st.Store
	case *rolestore.REST:
		return st.Store
	case *rolebindingstore.REST:
		return st.Store
	case legacyAlias:
		return st.Store
	}
	return nil
}
