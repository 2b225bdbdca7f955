// Package syncmetrics holds the propagation controllers' Prometheus
// metrics, served on the controller manager's /metrics, registered once
// for every type and room. Queue depth comes from the work queue metrics
// (workqueue_depth{name="sync_<type>"}).
package syncmetrics

import (
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

var (
	// Writes count member writes by type, cluster and verb.
	Writes = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "federation", Subsystem: "sync", Name: "member_writes_total",
		Help:           "Writes to member clusters by federated type, cluster and verb (apply, patch, delete).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"type", "cluster", "verb"})
	// Errors count failed member calls, and failed reconciles (cluster "").
	Errors = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "federation", Subsystem: "sync", Name: "errors_total",
		Help:           "Failed member calls by federated type and cluster; cluster is empty for failed reconciles.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"type", "cluster"})
	// Latency times a change's propagation.
	Latency = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace: "federation", Subsystem: "sync", Name: "propagation_seconds",
		Help:           "Time from a change of a federated object seen by the controller to the end of its member writes.",
		Buckets:        []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		StabilityLevel: metrics.ALPHA,
	}, []string{"type"})
	// DriftConflicts count the copies whose repairs were spent.
	DriftConflicts = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "federation", Subsystem: "sync", Name: "drift_conflicts_total",
		Help: "Copies a member kept changing back until the federation stopped repairing them (DriftConflict), " +
			"by federated type and cluster.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"type", "cluster"})
	// InitialPending counts down the objects found at start.
	InitialPending = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: "federation", Subsystem: "sync", Name: "initial_pending",
		Help: "Federated objects found when the controller started whose reconcile has not yet ended with every copy " +
			"found in sync or written; 0 once every copy was verified after a start.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"type"})
)

func init() {
	legacyregistry.MustRegister(Writes, Errors, Latency, DriftConflicts, InitialPending)
}
