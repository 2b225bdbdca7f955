package clusterstatus

import (
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/federation-v1/federation/pkg/clusterhealth"
)

// probeMetrics are the controller's Prometheus metrics, served on the
// controller manager's /metrics.
type probeMetrics struct {
	probeDuration *metrics.HistogramVec
	probes        *metrics.CounterVec
	ready         *metrics.GaugeVec
}

var clusterMetrics = newProbeMetrics()

func newProbeMetrics() *probeMetrics {
	m := &probeMetrics{
		probeDuration: metrics.NewHistogramVec(&metrics.HistogramOpts{
			Namespace: "federation", Subsystem: "cluster", Name: "probe_duration_seconds",
			Help:           "Time taken by one health probe of a member cluster.",
			Buckets:        []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
			StabilityLevel: metrics.ALPHA,
		}, []string{"cluster"}),
		probes: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace: "federation", Subsystem: "cluster", Name: "probes_total",
			Help:           "Health probes of member clusters by what they observed: Ready, NotReady or Offline.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"cluster", "result"}),
		ready: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Namespace: "federation", Subsystem: "cluster", Name: "ready",
			Help:           "1 when the member cluster's verdict is Ready, 0 otherwise.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"cluster"}),
	}
	legacyregistry.MustRegister(m.probeDuration, m.probes, m.ready)
	return m
}

func (m *probeMetrics) record(cluster string, obs clusterhealth.Observation, verdict clusterhealth.Verdict) {
	m.probes.WithLabelValues(cluster, string(clusterhealth.VerdictOf(obs))).Inc()
	ready := 0.0
	if verdict == clusterhealth.Ready {
		ready = 1
	}
	m.ready.WithLabelValues(cluster).Set(ready)
}

func (m *probeMetrics) forget(cluster string) {
	m.probeDuration.DeleteLabelValues(cluster)
	m.ready.DeleteLabelValues(cluster)
	for _, r := range []clusterhealth.Verdict{clusterhealth.Ready, clusterhealth.NotReady, clusterhealth.Offline} {
		m.probes.DeleteLabelValues(cluster, string(r))
	}
}
