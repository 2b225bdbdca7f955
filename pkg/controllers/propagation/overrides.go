package propagation

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// Event reasons of per-cluster overrides.
const (
	ReasonOverridesApplied = "OverridesApplied"
	ReasonOverrideFailed   = "OverrideFailed"
	ReasonBadOverrides     = "InvalidOverrides"
)

// overrideFailures counts the clusters whose overrides failed to apply,
// when the failure is first seen.
var overrideFailures = func() *metrics.CounterVec {
	m := metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "federation", Subsystem: "sync", Name: "override_failures_total",
		Help:           "Per-cluster overrides that failed to apply to a copy (left as it was), by federated type and cluster, counted when first seen.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"type", "cluster"})
	legacyregistry.MustRegister(m)
	return m
}()

// leftAlone is a cluster's copy whose overrides failed, as it is, for the
// status.
func (c *Controller) leftAlone(cluster string, fed *unstructured.Unstructured) []federatedtypes.Member {
	if cur, ok := c.members.Get(cluster, c.typ.Resource, fed.GetNamespace(), fed.GetName()); ok {
		return []federatedtypes.Member{{Cluster: cluster, Object: cur}}
	}
	return nil
}

// toldOverrides is what the events of an object last said.
type toldOverrides struct {
	applied string
	failed  map[string]string
}

// tellOverrides records an event when the rules applied where change, and
// a warning (and the metric) when a cluster's rules start failing or fail
// otherwise: not on every sync.
func (c *Controller) tellOverrides(fed *unstructured.Unstructured, o *plan.Overridden) {
	objKey := fedobject.Key(fed.GetNamespace(), fed.GetName())
	var told toldOverrides
	if v, ok := c.overridesTold.Load(objKey); ok {
		told = v.(toldOverrides)
	}
	now := toldOverrides{applied: o.Summary(), failed: map[string]string{}}
	if now.applied != told.applied {
		msg := "Overrides applied to " + c.objs.What(objKey) + ": " + now.applied
		if now.applied == "" {
			msg = "No overrides apply to " + c.objs.What(objKey) + " any more"
		}
		c.recorder.Event(fed, corev1.EventTypeNormal, ReasonOverridesApplied, msg)
	}
	for _, cl := range slices.Sorted(maps.Keys(o.Failed)) {
		msg := o.Failed[cl].Error()
		now.failed[cl] = msg
		if told.failed[cl] != msg {
			overrideFailures.WithLabelValues(c.typ.Name, cl).Inc()
			c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonOverrideFailed,
				"Overrides of %s failed in cluster %s, whose copy is left as it was: %v", c.objs.What(objKey), cl, msg)
		}
	}
	if now.applied == "" && len(now.failed) == 0 {
		c.overridesTold.Delete(objKey)
		return
	}
	c.overridesTold.Store(objKey, now)
}
