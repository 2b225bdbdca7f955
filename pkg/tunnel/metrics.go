package tunnel

import (
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// tunnelMetrics are the hub's Prometheus metrics, served on the
// apiserver's /metrics.
var tunnelMetrics = func() struct {
	open     *metrics.GaugeVec
	connects *metrics.CounterVec
	bytes    *metrics.CounterVec
} {
	m := struct {
		open     *metrics.GaugeVec
		connects *metrics.CounterVec
		bytes    *metrics.CounterVec
	}{
		open: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Namespace: "federation", Subsystem: "agent", Name: "tunnels",
			Help:           "Tunnels an agent holds open to this apiserver, by cluster (0 when none).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"cluster"}),
		connects: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace: "federation", Subsystem: "agent", Name: "tunnel_connects_total",
			Help:           "Tunnels opened by agents to this apiserver, by cluster: more than one means the agent reconnected.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"cluster"}),
		bytes: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace: "federation", Subsystem: "agent", Name: "tunnel_bytes_total",
			Help:           "Bytes of member requests through agents' tunnels, by cluster and direction (sent to the member, received from it).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"cluster", "direction"}),
	}
	legacyregistry.MustRegister(m.open, m.connects, m.bytes)
	return m
}()
