package apiserver

import (
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	daemonsetstore "k8s.io/kubernetes/pkg/registry/apps/daemonset/storage"
	deploymentstore "k8s.io/kubernetes/pkg/registry/apps/deployment/storage"
	replicasetstore "k8s.io/kubernetes/pkg/registry/apps/replicaset/storage"
	hpastore "k8s.io/kubernetes/pkg/registry/autoscaling/horizontalpodautoscaler/storage"
	jobstore "k8s.io/kubernetes/pkg/registry/batch/job/storage"
	leasestore "k8s.io/kubernetes/pkg/registry/coordination/lease/storage"
	configmapstore "k8s.io/kubernetes/pkg/registry/core/configmap/storage"
	eventstore "k8s.io/kubernetes/pkg/registry/core/event/storage"
	namespacestore "k8s.io/kubernetes/pkg/registry/core/namespace/storage"
	secretstore "k8s.io/kubernetes/pkg/registry/core/secret/storage"
	"k8s.io/kubernetes/pkg/registry/core/service/ipallocator"
	ingressstore "k8s.io/kubernetes/pkg/registry/networking/ingress/storage"

	servicestore "github.com/federation-v1/federation/pkg/registry/core/service/storage"
	clusterstore "github.com/federation-v1/federation/pkg/registry/federation/cluster/storage"
)

// stores builds the REST storage of one resource, keyed by resource
// ("deployments") and subresource ("deployments/status").
type stores func(generic.RESTOptionsGetter) (map[string]rest.Storage, error)

// federatedStores are Kubernetes' own storages of the federated types (the
// federation's own for Services), by the type's name in federatedtypes.All.
var federatedStores = map[string]stores{
	"namespaces": func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		namespaces, status, finalize, err := namespacestore.NewREST(getter)
		return map[string]rest.Storage{"namespaces": namespaces, "namespaces/status": status, "namespaces/finalize": finalize}, err
	},
	"configmaps": func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		configMaps, err := configmapstore.NewREST(getter)
		return map[string]rest.Storage{"configmaps": configMaps}, err
	},
	"secrets": func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		secrets, err := secretstore.NewREST(getter)
		return map[string]rest.Storage{"secrets": secrets}, err
	},
	// apiGroups gives it the federation's cluster IP allocator.
	"services": serviceStores(nil),
	"deployments": func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		d, err := deploymentstore.NewStorage(getter)
		return map[string]rest.Storage{
			"deployments":          d.Deployment,
			"deployments/status":   d.Status,
			"deployments/scale":    d.Scale,
			"deployments/rollback": d.Rollback, // extensions/v1beta1 only: see storesFor
		}, err
	},
	"replicasets": func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		r, err := replicasetstore.NewStorage(getter)
		return map[string]rest.Storage{"replicasets": r.ReplicaSet, "replicasets/status": r.Status, "replicasets/scale": r.Scale}, err
	},
	"daemonsets": func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		daemonSets, status, err := daemonsetstore.NewREST(getter)
		return map[string]rest.Storage{"daemonsets": daemonSets, "daemonsets/status": status}, err
	},
	"ingresses": func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		ingresses, status, err := ingressstore.NewREST(getter)
		return map[string]rest.Storage{"ingresses": ingresses, "ingresses/status": status}, err
	},
	"jobs": func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		jobs, err := jobstore.NewStorage(getter)
		return map[string]rest.Storage{"jobs": jobs.Job, "jobs/status": jobs.Status}, err
	},
	"horizontalpodautoscalers": func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		hpa, status, err := hpastore.NewREST(getter)
		return map[string]rest.Storage{"horizontalpodautoscalers": hpa, "horizontalpodautoscalers/status": status}, err
	},
}

// serviceStores builds the storage of Services, which get their cluster IP
// from ips (none with nil).
func serviceStores(ips ipallocator.Interface) stores {
	return func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		services, status, err := servicestore.NewREST(getter, ips)
		return map[string]rest.Storage{"services": services, "services/status": status}, err
	}
}

// eventsStores is the storage of core/v1 events, which the federation
// records and never propagates.
func eventsStores(getter generic.RESTOptionsGetter, ttlSeconds uint64) (map[string]rest.Storage, error) {
	events, err := eventstore.NewREST(getter, ttlSeconds)
	return map[string]rest.Storage{"events": events}, err
}

// clusterStores is the storage of the federation's member Clusters.
func clusterStores(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	clusters, status, err := clusterstore.NewREST(getter)
	return map[string]rest.Storage{"clusters": clusters, "clusters/status": status}, err
}

// leasesStores is the storage of coordination.k8s.io Leases: the
// federation's own locks (the controller managers' leader election),
// never propagated.
func leasesStores(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	leases, err := leasestore.NewREST(getter)
	return map[string]rest.Storage{"leases": leases}, err
}
