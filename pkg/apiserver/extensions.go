package apiserver

import (
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	daemonsetstore "k8s.io/kubernetes/pkg/registry/apps/daemonset/storage"
	deploymentstore "k8s.io/kubernetes/pkg/registry/apps/deployment/storage"
	replicasetstore "k8s.io/kubernetes/pkg/registry/apps/replicaset/storage"
	ingressstore "k8s.io/kubernetes/pkg/registry/networking/ingress/storage"
)

// extensionsStorage is the storage of extensions/v1beta1: the same stores
// as apps/v1 (workloads) and networking.k8s.io/v1 (ingresses), so v1-era
// manifests are stored as the current versions and readable through both,
// plus the deployments/rollback that only v1 had.
func extensionsStorage(workloads map[string]rest.Storage, rollback rest.Storage, ingress *ingressstore.REST, ingressStatus *ingressstore.StatusREST) map[string]rest.Storage {
	storage := map[string]rest.Storage{
		"ingresses":            legacyAlias{ingress.Store},
		"ingresses/status":     ingressStatus,
		"deployments/rollback": rollback,
	}
	for name, s := range workloads {
		switch st := s.(type) {
		case *deploymentstore.REST:
			s = legacyAlias{st.Store}
		case *replicasetstore.REST:
			s = legacyAlias{st.Store}
		case *daemonsetstore.REST:
			s = legacyAlias{st.Store}
		case scaleStorage:
			s = legacyScale{st}
		}
		storage[name] = s
	}
	return storage
}

// legacyAlias serves a store under extensions/v1beta1 without the short
// names and categories it has in its current group, so that "deploy" or
// "all" resolve to one resource only (kubectl warns otherwise).
type legacyAlias struct {
	*genericregistry.Store
}
