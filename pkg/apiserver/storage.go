package apiserver

import (
	"fmt"
	"sort"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/registry/core/service/ipallocator"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/memberproxy"
	"github.com/federation-v1/federation/pkg/registry/core/membersonly"
	"github.com/federation-v1/federation/pkg/serviceaccounttoken"
	"github.com/federation-v1/federation/pkg/tunnel"
)

// coreV1 is the legacy core group's only version, served under /api.
var coreV1 = schema.GroupVersion{Version: "v1"}

// apiGroups builds the REST storage of every served group: each federated
// type under each group/version the table serves it under, then what the
// federation serves without propagating it (events, clusters, leases,
// certificate signing requests). The legacy
// core group ("/api/v1") is returned separately because it is installed
// under another prefix. Services get their cluster IPs from serviceIPs;
// ServiceAccounts their tokens (serviceaccounts/token) from tokens, when
// set, which then reads the ServiceAccounts and Secrets stores.
func apiGroups(getter generic.RESTOptionsGetter, eventTTLSeconds uint64, serviceIPs ipallocator.Interface, tokens *serviceaccounttoken.Tokens, tombstones *tombstoneWriter, hub *tunnel.Hub, proxy *memberproxy.Proxy) (legacy *genericapiserver.APIGroupInfo, groups []*genericapiserver.APIGroupInfo, err error) {
	served := servedStorage{}
	built := map[string]map[string]rest.Storage{}
	for _, t := range federatedtypes.All {
		if servedWithAccess(t) {
			continue
		}
		build := federatedStores[t.Name]
		if t.Name == "services" {
			build = serviceStores(serviceIPs)
		}
		if t.Name == "serviceaccounts" && tokens != nil {
			build = serviceAccountStores(tokens)
		}
		if build == nil {
			return nil, nil, fmt.Errorf("no storage for the federated type %q", t.Name)
		}
		stores, err := build(getter)
		if err != nil {
			return nil, nil, fmt.Errorf("creating %s storage: %w", t.Name, err)
		}
		built[t.Name] = stores
		for _, gv := range t.ServedVersions() {
			recording, err := withTombstones(t, storesFor(gv, stores), tombstones)
			if err != nil {
				return nil, nil, err
			}
			served.add(gv, recording)
		}
	}

	// Tombstones are ConfigMaps, written through their storage (before
	// any request).
	tombstones.configMaps, _ = built["configmaps"]["configmaps"].(rest.Creater)
	if tokens != nil {
		accounts, secrets := built["serviceaccounts"]["serviceaccounts"], built["secrets"]["secrets"]
		if accounts == nil || secrets == nil {
			return nil, nil, fmt.Errorf("service-account tokens need the serviceaccounts and secrets storage")
		}
		tokens.Objects().Bind(accounts.(rest.Getter), secrets.(rest.Getter))
	}

	events, err := eventsStores(getter, eventTTLSeconds)
	if err != nil {
		return nil, nil, fmt.Errorf("creating events storage: %w", err)
	}
	served.add(coreV1, events)
	// Read-only and empty: kubectl's default prune list names them.
	served.add(coreV1, membersonly.Stores())
	clusters, err := clusterStores(getter, hub, proxy)
	if err != nil {
		return nil, nil, fmt.Errorf("creating clusters storage: %w", err)
	}
	served.add(federationv1beta1.SchemeGroupVersion, clusters)
	leases, err := leasesStores(getter)
	if err != nil {
		return nil, nil, fmt.Errorf("creating leases storage: %w", err)
	}
	served.add(coordinationv1.SchemeGroupVersion, leases)
	csrs, err := certificatesStores(getter)
	if err != nil {
		return nil, nil, fmt.Errorf("creating certificatesigningrequests storage: %w", err)
	}
	served.add(certificatesGroupVersion, csrs)

	for _, group := range served.groups() {
		info := genericapiserver.NewDefaultAPIGroupInfo(group, legacyscheme.Scheme, metav1.ParameterCodec, legacyscheme.Codecs)
		if group == federationv1beta1.SchemeGroupVersion.Group {
			info.NegotiatedSerializer = withoutProtobuf{info.NegotiatedSerializer}
			// It decodes the clusters' proxy options too.
			info.ParameterCodec = legacyscheme.ParameterCodec
		}
		for gv, stores := range served {
			if gv.Group == group {
				info.VersionedResourcesStorageMap[gv.Version] = stores
			}
		}
		if group == coreV1.Group {
			legacy = &info
		} else {
			groups = append(groups, &info)
		}
	}
	return legacy, groups, nil
}

// servedGroupVersions are the group/versions the server serves, for the
// storage factory's resource configuration.
func servedGroupVersions() []schema.GroupVersion {
	gvs := []schema.GroupVersion{coreV1, federationv1beta1.SchemeGroupVersion, coordinationv1.SchemeGroupVersion, certificatesGroupVersion}
	for _, t := range federatedtypes.All {
		gvs = append(gvs, t.ServedVersions()...)
	}
	return gvs
}

// servedStorage is the storage of each served group/version, keyed by
// resource ("deployments") and subresource ("deployments/status").
type servedStorage map[schema.GroupVersion]map[string]rest.Storage

func (s servedStorage) add(gv schema.GroupVersion, stores map[string]rest.Storage) {
	if s[gv] == nil {
		s[gv] = map[string]rest.Storage{}
	}
	for name, store := range stores {
		s[gv][name] = store
	}
}

// groups are the served group names in the order they were first added,
// so that discovery lists them in the table's order.
func (s servedStorage) groups() []string {
	var names []string
	seen := map[string]bool{}
	add := func(group string) {
		if !seen[group] {
			seen[group] = true
			names = append(names, group)
		}
	}
	for _, t := range federatedtypes.All {
		for _, gv := range t.ServedVersions() {
			if _, ok := s[gv]; ok { // not those served with the access groups
				add(gv.Group)
			}
		}
	}
	var others []string
	for gv := range s {
		if !seen[gv.Group] {
			others = append(others, gv.Group)
		}
	}
	sort.Strings(others)
	for _, group := range others {
		add(group)
	}
	return names
}
