package apiserver

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	daemonsetstore "k8s.io/kubernetes/pkg/registry/apps/daemonset/storage"
	deploymentstore "k8s.io/kubernetes/pkg/registry/apps/deployment/storage"
	replicasetstore "k8s.io/kubernetes/pkg/registry/apps/replicaset/storage"
	statefulsetstore "k8s.io/kubernetes/pkg/registry/apps/statefulset/storage"
	hpastore "k8s.io/kubernetes/pkg/registry/autoscaling/horizontalpodautoscaler/storage"
	cronjobstore "k8s.io/kubernetes/pkg/registry/batch/cronjob/storage"
	jobstore "k8s.io/kubernetes/pkg/registry/batch/job/storage"
	leasestore "k8s.io/kubernetes/pkg/registry/coordination/lease/storage"
	configmapstore "k8s.io/kubernetes/pkg/registry/core/configmap/storage"
	eventstore "k8s.io/kubernetes/pkg/registry/core/event/storage"
	limitrangestore "k8s.io/kubernetes/pkg/registry/core/limitrange/storage"
	namespacestore "k8s.io/kubernetes/pkg/registry/core/namespace/storage"
	pvcstore "k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim/storage"
	resourcequotastore "k8s.io/kubernetes/pkg/registry/core/resourcequota/storage"
	secretstore "k8s.io/kubernetes/pkg/registry/core/secret/storage"
	"k8s.io/kubernetes/pkg/registry/core/service/ipallocator"
	serviceaccountstore "k8s.io/kubernetes/pkg/registry/core/serviceaccount/storage"
	ingressstore "k8s.io/kubernetes/pkg/registry/networking/ingress/storage"
	networkpolicystore "k8s.io/kubernetes/pkg/registry/networking/networkpolicy/storage"
	pdbstore "k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget/storage"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/memberproxy"
	servicestore "github.com/federation-v1/federation/pkg/registry/core/service/storage"
	clusterstore "github.com/federation-v1/federation/pkg/registry/federation/cluster/storage"
	"github.com/federation-v1/federation/pkg/serviceaccounttoken"
	"github.com/federation-v1/federation/pkg/tunnel"
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
	// Without a token issuer (apiGroups gives it the federation's):
	// no serviceaccounts/token.
	"serviceaccounts": func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		accounts, err := serviceaccountstore.NewREST(getter, nil, nil, 0, nil, nil, nil, false, 0)
		return map[string]rest.Storage{"serviceaccounts": accounts}, err
	},
	"statefulsets": func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		s, err := statefulsetstore.NewStorage(getter)
		return map[string]rest.Storage{"statefulsets": s.StatefulSet, "statefulsets/status": s.Status, "statefulsets/scale": s.Scale}, err
	},
	"cronjobs": func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		cronJobs, status, err := cronjobstore.NewREST(getter)
		return map[string]rest.Storage{"cronjobs": cronJobs, "cronjobs/status": status}, err
	},
	"poddisruptionbudgets": func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		pdbs, status, err := pdbstore.NewREST(getter)
		return map[string]rest.Storage{"poddisruptionbudgets": pdbs, "poddisruptionbudgets/status": status}, err
	},
	"networkpolicies": func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		policies, err := networkpolicystore.NewREST(getter)
		return map[string]rest.Storage{"networkpolicies": policies}, err
	},
	"persistentvolumeclaims": func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		claims, status, err := pvcstore.NewREST(getter)
		return map[string]rest.Storage{"persistentvolumeclaims": claims, "persistentvolumeclaims/status": status}, err
	},
	"limitranges": func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		ranges, err := limitrangestore.NewREST(getter)
		return map[string]rest.Storage{"limitranges": ranges}, err
	},
	"resourcequotas": func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		quotas, status, err := resourcequotastore.NewREST(getter)
		return map[string]rest.Storage{"resourcequotas": quotas, "resourcequotas/status": status}, err
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

// serviceAccountStores builds the storage of ServiceAccounts with the
// TokenRequest API (serviceaccounts/token), Kubernetes' own TokenREST:
// its validation (expirationSeconds at least 10 minutes, at most 2^32
// seconds), audiences (the API's by default) and claims. A token may be
// bound to a Secret of the account's namespace, and then dies with it;
// the federation has no pods or nodes, so a token bound to one is refused
// (400). No maximum expiration is imposed beyond validation's, as
// kube-apiserver without --service-account-max-token-expiration.
func serviceAccountStores(tokens *serviceaccounttoken.Tokens) stores {
	return func(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		accounts, err := serviceaccountstore.NewREST(getter, tokens.Generator(), tokens.Audiences(), 0,
			serviceaccounttoken.Unbindable("Pod"), tokens.Objects().Secrets(), serviceaccounttoken.Unbindable("Node"), false, 0)
		if err != nil {
			return nil, err
		}
		return map[string]rest.Storage{"serviceaccounts": accounts, "serviceaccounts/token": accounts.Token}, nil
	}
}

// eventsStores is the storage of core/v1 events, which the federation
// records and never propagates.
func eventsStores(getter generic.RESTOptionsGetter, ttlSeconds uint64) (map[string]rest.Storage, error) {
	events, err := eventstore.NewREST(getter, ttlSeconds)
	return map[string]rest.Storage{"events": events}, err
}

// clusterStores is the storage of the federation's member Clusters, with
// the agents' tunnels and the proxy to every member.
func clusterStores(getter generic.RESTOptionsGetter, hub *tunnel.Hub, proxy *memberproxy.Proxy) (map[string]rest.Storage, error) {
	clusters, status, err := clusterstore.NewREST(getter)
	if err != nil {
		return nil, err
	}
	tunnels, proxyREST := clusterstore.NewConnecters(clusters, hub, proxy)
	hub.CheckWith(func(ctx context.Context, name, serial string) (bool, error) {
		obj, err := clusters.Get(ctx, name, &metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		cluster := obj.(*federationv1beta1.Cluster)
		return federationv1beta1.IsAgent(cluster) && federationv1beta1.AgentCertificateBound(cluster, serial), nil
	})
	return map[string]rest.Storage{"clusters": clusters, "clusters/status": status, "clusters/tunnel": tunnels, "clusters/proxy": proxyREST}, nil
}

// leasesStores is the storage of coordination.k8s.io Leases: the
// federation's own locks (the controller managers' leader election),
// never propagated.
func leasesStores(getter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	leases, err := leasestore.NewREST(getter)
	return map[string]rest.Storage{"leases": leases}, err
}
