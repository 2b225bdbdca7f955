package apiserver

import (
	"sort"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionslisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/endpoints/discovery"
	"k8s.io/client-go/tools/cache"
)

// crdGroups lists apiextensions.k8s.io and the CRDs' groups in the
// federation's unaggregated /apis (aggregated discovery has them from the
// shared manager), as the aggregator does for kube-apiserver: older
// clients read that list.
type crdGroups struct {
	groups discovery.GroupManager
	crds   apiextensionslisters.CustomResourceDefinitionLister

	// role is told the groups, for the controller manager's role on them.
	role *customResourcesRoleWriter

	mu sync.Mutex
	// listed are the CRD groups added, to remove those whose CRDs went.
	listed map[string]bool
}

func newCRDGroups(groups discovery.GroupManager, informer cache.SharedIndexInformer, crds apiextensionslisters.CustomResourceDefinitionLister,
	role *customResourcesRoleWriter) (*crdGroups, error) {
	g := &crdGroups{groups: groups, crds: crds, role: role, listed: map[string]bool{}}
	v1 := metav1.GroupVersionForDiscovery{GroupVersion: apiextensionsv1.SchemeGroupVersion.String(), Version: "v1"}
	groups.AddGroup(metav1.APIGroup{Name: apiextensionsv1.GroupName, Versions: []metav1.GroupVersionForDiscovery{v1}, PreferredVersion: v1})
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { g.sync() }, UpdateFunc: func(any, any) { g.sync() }, DeleteFunc: func(any) { g.sync() },
	})
	return g, err
}

// sync lists the groups of every CRD with a served version, their
// versions in Kubernetes' order of preference.
func (g *crdGroups) sync() {
	crds, err := g.crds.List(labels.Everything())
	if err != nil {
		return
	}
	versions := map[string]map[string]bool{}
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			if versions[crd.Spec.Group] == nil {
				versions[crd.Spec.Group] = map[string]bool{}
			}
			versions[crd.Spec.Group][v.Name] = true
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.role != nil {
		names := make([]string, 0, len(versions))
		for group := range versions {
			names = append(names, group)
		}
		sort.Strings(names)
		g.role.want(names)
	}
	for group := range g.listed {
		if versions[group] == nil {
			g.groups.RemoveGroup(group)
			delete(g.listed, group)
		}
	}
	for group, set := range versions {
		var names []string
		for v := range set {
			names = append(names, v)
		}
		sort.Slice(names, func(i, j int) bool { return version.CompareKubeAwareVersionStrings(names[i], names[j]) > 0 })
		apiGroup := metav1.APIGroup{Name: group}
		for _, v := range names {
			apiGroup.Versions = append(apiGroup.Versions, metav1.GroupVersionForDiscovery{GroupVersion: group + "/" + v, Version: v})
		}
		apiGroup.PreferredVersion = apiGroup.Versions[0]
		g.groups.AddGroup(apiGroup)
		g.listed[group] = true
	}
}
