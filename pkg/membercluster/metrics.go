package membercluster

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// cachedObjects counts the objects in each member cache: with the label
// filter it follows the federated objects, whatever else the members hold.
var cachedObjects = func() *metrics.GaugeVec {
	g := metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: "federation", Subsystem: "member", Name: "cached_objects",
		Help:           "Objects in the controller manager's cache of a member cluster, by resource (only objects labelled by the federation are cached).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"cluster", "resource"})
	legacyregistry.MustRegister(g)
	return g
}()

// informerCount counts the informers the controller manager runs in each
// member: one per watched resource (built-in types, and the custom
// resources of each Established CRD). It follows what is watched, and
// falls back when a CRD goes.
var informerCount = func() *metrics.GaugeVec {
	g := metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: "federation", Subsystem: "member", Name: "informers",
		Help:           "Informers the controller manager runs in a member cluster, one per watched resource (custom resources' while their CRD is Established).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"cluster"})
	legacyregistry.MustRegister(g)
	return g
}()

// recordCacheSizes sets the gauges for every usable member.
func (m *Manager) recordCacheSizes() {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for name, mem := range m.members {
		sizes := mem.cacheSizes()
		for gvr, n := range sizes {
			cachedObjects.WithLabelValues(name, gvr.GroupResource().String()).Set(float64(n))
		}
		informerCount.WithLabelValues(name).Set(float64(len(sizes)))
	}
}

// forgetCacheSizes removes a member's series when its caches stop.
func forgetCacheSizes(name string, mem *member) {
	for gvr := range mem.cacheSizes() {
		forgetCacheSize(name, gvr)
	}
	informerCount.DeleteLabelValues(name)
}

// forgetCacheSize removes the series of one resource no longer watched.
func forgetCacheSize(name string, gvr schema.GroupVersionResource) {
	cachedObjects.DeleteLabelValues(name, gvr.GroupResource().String())
}
