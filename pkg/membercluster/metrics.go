package membercluster

import (
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

// recordCacheSizes sets the gauge for every usable member.
func (m *Manager) recordCacheSizes() {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for name, mem := range m.members {
		for gvr, inf := range mem.informer {
			cachedObjects.WithLabelValues(name, gvr.GroupResource().String()).Set(float64(len(inf.Informer().GetStore().ListKeys())))
		}
	}
}

// forgetCacheSizes removes a member's series when its caches stop.
func forgetCacheSizes(name string, mem *member) {
	for gvr := range mem.informer {
		cachedObjects.DeleteLabelValues(name, gvr.GroupResource().String())
	}
}
