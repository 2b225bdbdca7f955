package propagation

import (
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// metricsSet are the propagation controllers' Prometheus metrics, served on the
// controller manager's /metrics. Queue depth comes from the work queue
// metrics (workqueue_depth{name="sync_<type>"}).
type metricsSet struct {
	writes  *metrics.CounterVec
	errors  *metrics.CounterVec
	latency *metrics.HistogramVec
	// driftConflicts count the copies whose repairs were spent (drift.go).
	driftConflicts *metrics.CounterVec
	// initialPending counts down the objects found at start (initial.go).
	initialPending *metrics.GaugeVec
}

var syncMetrics = newMetrics()

func newMetrics() *metricsSet {
	m := &metricsSet{
		writes: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace: "federation", Subsystem: "sync", Name: "member_writes_total",
			Help:           "Writes to member clusters by federated type, cluster and verb (apply, patch, delete).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"type", "cluster", "verb"}),
		errors: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace: "federation", Subsystem: "sync", Name: "errors_total",
			Help:           "Failed member calls by federated type and cluster; cluster is empty for failed reconciles.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"type", "cluster"}),
		latency: metrics.NewHistogramVec(&metrics.HistogramOpts{
			Namespace: "federation", Subsystem: "sync", Name: "propagation_seconds",
			Help:           "Time from a change of a federated object seen by the controller to the end of its member writes.",
			Buckets:        []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
			StabilityLevel: metrics.ALPHA,
		}, []string{"type"}),
		driftConflicts: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace: "federation", Subsystem: "sync", Name: "drift_conflicts_total",
			Help: "Copies a member kept changing back until the federation stopped repairing them (DriftConflict), " +
				"by federated type and cluster.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"type", "cluster"}),
		initialPending: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Namespace: "federation", Subsystem: "sync", Name: "initial_pending",
			Help: "Federated objects found when the controller started whose reconcile has not yet ended with every copy " +
				"found in sync or written; 0 once every copy was verified after a start.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"type"}),
	}
	legacyregistry.MustRegister(m.writes, m.errors, m.latency, m.driftConflicts, m.initialPending)
	return m
}
