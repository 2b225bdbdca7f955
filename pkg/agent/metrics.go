package agent

import (
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// agentMetrics are served on the agent's --metrics-bind-address.
var agentMetrics = func() struct {
	connected  *metrics.Gauge
	reconnects *metrics.Counter
	requests   *metrics.Counter
} {
	m := struct {
		connected  *metrics.Gauge
		reconnects *metrics.Counter
		requests   *metrics.Counter
	}{
		connected: metrics.NewGauge(&metrics.GaugeOpts{
			Namespace: "federation_agent", Name: "tunnels_open",
			Help: "The tunnels the agent holds open to the federation: one to each of its apiservers.", StabilityLevel: metrics.ALPHA,
		}),
		reconnects: metrics.NewCounter(&metrics.CounterOpts{
			Namespace: "federation_agent", Name: "tunnel_reconnects_total",
			Help: "Times the tunnel closed and the agent dialled the federation again.", StabilityLevel: metrics.ALPHA,
		}),
		requests: metrics.NewCounter(&metrics.CounterOpts{
			Namespace: "federation_agent", Name: "member_requests_total",
			Help: "Requests from the federation the agent sent to its member's API server.", StabilityLevel: metrics.ALPHA,
		}),
	}
	legacyregistry.MustRegister(m.connected, m.reconnects, m.requests)
	return m
}()
