package memberevents

import (
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

func counter(name, help string, labels ...string) *metrics.CounterVec {
	c := metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "federation", Subsystem: "member_events", Name: name, Help: help, StabilityLevel: metrics.ALPHA,
	}, labels)
	legacyregistry.MustRegister(c)
	return c
}

var (
	// writes counts the writes of mirrored events at the federation.
	writes = counter("writes_total",
		"Writes of member clusters' events at the federation apiserver, by cluster and verb (create or patch).", "cluster", "verb")
	// ownerGets counts the reads of members' objects to find their owner.
	ownerGets = counter("owner_gets_total",
		"Reads of member objects the caches do not hold (Pods, ReplicaSets, Jobs) to find the copy that owns them, by cluster.", "cluster")
	// dropped counts the member events left out for a bound.
	dropped = counter("dropped_total",
		"Member events left out because a bound was reached (reason pending: too many waiting to be resolved), by cluster.", "cluster", "reason")
)
