package apiserver

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	daemonsetstore "k8s.io/kubernetes/pkg/registry/apps/daemonset/storage"
	deploymentstore "k8s.io/kubernetes/pkg/registry/apps/deployment/storage"
	replicasetstore "k8s.io/kubernetes/pkg/registry/apps/replicaset/storage"
	hpastore "k8s.io/kubernetes/pkg/registry/autoscaling/horizontalpodautoscaler/storage"
	jobstore "k8s.io/kubernetes/pkg/registry/batch/job/storage"
	configmapstore "k8s.io/kubernetes/pkg/registry/core/configmap/storage"
	eventstore "k8s.io/kubernetes/pkg/registry/core/event/storage"
	namespacestore "k8s.io/kubernetes/pkg/registry/core/namespace/storage"
	secretstore "k8s.io/kubernetes/pkg/registry/core/secret/storage"
	ingressstore "k8s.io/kubernetes/pkg/registry/networking/ingress/storage"

	"github.com/federation-v1/federation/pkg/apis/federation"
	servicestore "github.com/federation-v1/federation/pkg/registry/core/service/storage"
	clusterstore "github.com/federation-v1/federation/pkg/registry/federation/cluster/storage"
)

// apiGroups builds the REST storage of every served group. The legacy core
// group ("/api/v1") is returned separately because it is installed under
// another prefix.
func apiGroups(getter generic.RESTOptionsGetter, eventTTLSeconds uint64) (legacy *genericapiserver.APIGroupInfo, groups []*genericapiserver.APIGroupInfo, err error) {
	newGroup := func(name string) *genericapiserver.APIGroupInfo {
		g := genericapiserver.NewDefaultAPIGroupInfo(name, legacyscheme.Scheme, metav1.ParameterCodec, legacyscheme.Codecs)
		return &g
	}

	core := newGroup("")
	coreV1, err := coreStorage(getter, eventTTLSeconds)
	if err != nil {
		return nil, nil, err
	}
	core.VersionedResourcesStorageMap["v1"] = coreV1

	workloads, rollback, err := workloadStorage(getter)
	if err != nil {
		return nil, nil, err
	}
	ingress, ingressStatus, err := ingressstore.NewREST(getter)
	if err != nil {
		return nil, nil, fmt.Errorf("creating ingress storage: %w", err)
	}

	apps := newGroup("apps")
	apps.VersionedResourcesStorageMap["v1"] = workloads

	extensions := newGroup("extensions")
	extensions.VersionedResourcesStorageMap["v1beta1"] = extensionsStorage(workloads, rollback, ingress, ingressStatus)

	networking := newGroup("networking.k8s.io")
	networking.VersionedResourcesStorageMap["v1"] = map[string]rest.Storage{
		"ingresses":        ingress,
		"ingresses/status": ingressStatus,
	}

	jobs, err := jobstore.NewStorage(getter)
	if err != nil {
		return nil, nil, fmt.Errorf("creating job storage: %w", err)
	}
	batch := newGroup("batch")
	batch.VersionedResourcesStorageMap["v1"] = map[string]rest.Storage{
		"jobs":        jobs.Job,
		"jobs/status": jobs.Status,
	}

	hpa, hpaStatus, err := hpastore.NewREST(getter)
	if err != nil {
		return nil, nil, fmt.Errorf("creating horizontalpodautoscaler storage: %w", err)
	}
	autoscaling := newGroup("autoscaling")
	for _, version := range []string{"v1", "v2"} {
		autoscaling.VersionedResourcesStorageMap[version] = map[string]rest.Storage{
			"horizontalpodautoscalers":        hpa,
			"horizontalpodautoscalers/status": hpaStatus,
		}
	}

	cluster, clusterStatus, err := clusterstore.NewREST(getter)
	if err != nil {
		return nil, nil, fmt.Errorf("creating cluster storage: %w", err)
	}
	fed := newGroup(federation.GroupName)
	fed.NegotiatedSerializer = withoutProtobuf{fed.NegotiatedSerializer}
	fed.VersionedResourcesStorageMap["v1beta1"] = map[string]rest.Storage{
		"clusters":        cluster,
		"clusters/status": clusterStatus,
	}

	return core, []*genericapiserver.APIGroupInfo{apps, extensions, networking, batch, autoscaling, fed}, nil
}

// coreStorage builds the storage of the served core (v1) resources.
func coreStorage(getter generic.RESTOptionsGetter, eventTTLSeconds uint64) (map[string]rest.Storage, error) {
	namespaces, namespaceStatus, namespaceFinalize, err := namespacestore.NewREST(getter)
	if err != nil {
		return nil, fmt.Errorf("creating namespace storage: %w", err)
	}
	services, serviceStatus, err := servicestore.NewREST(getter)
	if err != nil {
		return nil, fmt.Errorf("creating service storage: %w", err)
	}
	secrets, err := secretstore.NewREST(getter)
	if err != nil {
		return nil, fmt.Errorf("creating secret storage: %w", err)
	}
	configMaps, err := configmapstore.NewREST(getter)
	if err != nil {
		return nil, fmt.Errorf("creating configmap storage: %w", err)
	}
	events, err := eventstore.NewREST(getter, eventTTLSeconds)
	if err != nil {
		return nil, fmt.Errorf("creating event storage: %w", err)
	}
	return map[string]rest.Storage{
		"namespaces":          namespaces,
		"namespaces/status":   namespaceStatus,
		"namespaces/finalize": namespaceFinalize,
		"services":            services,
		"services/status":     serviceStatus,
		"secrets":             secrets,
		"configmaps":          configMaps,
		"events":              events,
	}, nil
}

// workloadStorage builds the storage of the served apps resources, shared by
// apps/v1 and extensions/v1beta1, and the deployments/rollback storage that
// only extensions/v1beta1 serves.
func workloadStorage(getter generic.RESTOptionsGetter) (map[string]rest.Storage, rest.Storage, error) {
	deployments, err := deploymentstore.NewStorage(getter)
	if err != nil {
		return nil, nil, fmt.Errorf("creating deployment storage: %w", err)
	}
	replicaSets, err := replicasetstore.NewStorage(getter)
	if err != nil {
		return nil, nil, fmt.Errorf("creating replicaset storage: %w", err)
	}
	daemonSets, daemonSetStatus, err := daemonsetstore.NewREST(getter)
	if err != nil {
		return nil, nil, fmt.Errorf("creating daemonset storage: %w", err)
	}
	return map[string]rest.Storage{
		"deployments":        deployments.Deployment,
		"deployments/status": deployments.Status,
		"deployments/scale":  deployments.Scale,
		"replicasets":        replicaSets.ReplicaSet,
		"replicasets/status": replicaSets.Status,
		"replicasets/scale":  replicaSets.Scale,
		"daemonsets":         daemonSets,
		"daemonsets/status":  daemonSetStatus,
	}, deployments.Rollback, nil
}
