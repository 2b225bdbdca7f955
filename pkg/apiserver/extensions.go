package apiserver

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	daemonsetstore "k8s.io/kubernetes/pkg/registry/apps/daemonset/storage"
	deploymentstore "k8s.io/kubernetes/pkg/registry/apps/deployment/storage"
	replicasetstore "k8s.io/kubernetes/pkg/registry/apps/replicaset/storage"
	ingressstore "k8s.io/kubernetes/pkg/registry/networking/ingress/storage"
)

// extensions is the v1-era group/version that serves the apps and
// networking resources with the same stores as their current versions, so
// v1-era manifests are stored as the current versions and readable through
// both.
var extensions = schema.GroupVersion{Group: "extensions", Version: "v1beta1"}

// extensionsOnly are the subresources only v1 had, served under extensions
// alone.
var extensionsOnly = map[string]bool{"deployments/rollback": true}

// storesFor returns a resource's stores as served under gv: under
// extensions/v1beta1 as legacy aliases, elsewhere without the
// extensions-only subresources.
func storesFor(gv schema.GroupVersion, stores map[string]rest.Storage) map[string]rest.Storage {
	served := make(map[string]rest.Storage, len(stores))
	for name, s := range stores {
		switch {
		case gv == extensions:
			served[name] = legacy(s)
		case !extensionsOnly[name]:
			served[name] = s
		}
	}
	return served
}

// legacy wraps a store for extensions/v1beta1.
func legacy(s rest.Storage) rest.Storage {
	switch st := s.(type) {
	case *deploymentstore.REST:
		return legacyAlias{st.Store}
	case *replicasetstore.REST:
		return legacyAlias{st.Store}
	case *daemonsetstore.REST:
		return legacyAlias{st.Store}
	case *ingressstore.REST:
		return legacyAlias{st.Store}
	case scaleStorage:
		return legacyScale{st}
	}
	return s
}

// legacyAlias serves a store under extensions/v1beta1 without the short
// names and categories it has in its current group, so that "deploy" or
// "all" resolve to one resource only (kubectl warns otherwise).
type legacyAlias struct {
	*genericregistry.Store
}
