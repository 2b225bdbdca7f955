package fedenv

import (
	"fmt"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// MetricByLabel reads a /metrics body (Prometheus text format) and sums the
// samples of the metric name whose labels hold every pair of match, by the
// value of label: e.g. federation_sync_member_writes_total by cluster.
func MetricByLabel(body, name, label string, match map[string]string) (map[string]float64, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parsing /metrics: %w", err)
	}
	out := map[string]float64{}
	family, ok := families[name]
	if !ok {
		return out, nil
	}
	for _, m := range family.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if !holds(labels, match) {
			continue
		}
		switch {
		case m.Counter != nil:
			out[labels[label]] += m.GetCounter().GetValue()
		case m.Gauge != nil:
			out[labels[label]] += m.GetGauge().GetValue()
		case m.Untyped != nil:
			out[labels[label]] += m.GetUntyped().GetValue()
		}
	}
	return out, nil
}

func holds(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}
