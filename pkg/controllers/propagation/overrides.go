package propagation

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/overrides"
)

// Event reasons of per-cluster overrides.
const (
	ReasonOverridesApplied = "OverridesApplied"
	ReasonOverrideFailed   = "OverrideFailed"
	ReasonBadOverrides     = "InvalidOverrides"
)

// errOverrideFailed says a cluster's overrides did not apply: its copy is
// left as it is.
var errOverrideFailed = errors.New("overrides did not apply")

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

// overridden is what one sync did with an object's overrides.
type overridden struct {
	// applied are the indexes of the rules applied, by cluster.
	applied map[string][]int
	// failed are the errors of the clusters whose rules failed.
	failed map[string]error
}

// withOverrides returns desiredIn with fed's overrides applied to the copy
// of each placed cluster, hashed again (so that drift repair restores
// each cluster's own version), and a record of what was applied. A cluster
// no rule chooses gets the copy unchanged, with the same hash. The error
// says the annotation is invalid (admission keeps such objects out).
func (c *Controller) withOverrides(fed *unstructured.Unstructured, placed map[string]bool, desiredIn desiredFunc) (desiredFunc, *overridden, error) {
	done := &overridden{applied: map[string][]int{}, failed: map[string]error{}}
	rules, err := overrides.ForObject(fed.GetAnnotations())
	if err != nil || len(rules) == 0 {
		return desiredIn, done, err
	}
	clusterLabels := map[string]map[string]string{}
	for _, cl := range c.members.Clusters() {
		clusterLabels[cl.Name] = cl.Labels
	}
	return func(cluster string) (*unstructured.Unstructured, string, error) {
		d, h, err := desiredIn(cluster)
		if err != nil || !placed[cluster] {
			return d, h, err
		}
		obj, applied, err := overrides.Apply(rules, cluster, clusterLabels[cluster], d.Object, field.NewPath("overrides"))
		if err != nil {
			done.failed[cluster] = err
			return nil, "", fmt.Errorf("%w: %v", errOverrideFailed, err)
		}
		if len(applied) == 0 {
			return d, h, nil
		}
		done.applied[cluster] = applied
		out := &unstructured.Unstructured{Object: obj}
		if c.typ.Pods != nil {
			// The marks again: a rule may not make a copy select (or
			// claim) what is not the federation's.
			c.typ.Pods.Mark(out, c.members.Federation())
		}
		// (Hashed again without the former hash.)
		return plan.DesiredFor(out, nil, "", nil)
	}, done, nil
}

// leftAlone is a cluster's copy whose overrides failed, as it is, for the
// status.
func (c *Controller) leftAlone(cluster string, fed *unstructured.Unstructured) []federatedtypes.Member {
	if cur, ok := c.members.Get(cluster, c.typ.Resource, fed.GetNamespace(), fed.GetName()); ok {
		return []federatedtypes.Member{{Cluster: cluster, Object: cur}}
	}
	return nil
}

// failures are the clusters' override errors, for the Propagated condition.
func (o *overridden) failures() []string {
	var out []string
	for _, cl := range slices.Sorted(maps.Keys(o.failed)) {
		out = append(out, fmt.Sprintf("cluster %s: %v (the copy there is left as it was)", cl, o.failed[cl]))
	}
	return out
}

// toldOverrides is what the events of an object last said.
type toldOverrides struct {
	applied string
	failed  map[string]string
}

// tellOverrides records an event when the rules applied where change, and
// a warning (and the metric) when a cluster's rules start failing or fail
// otherwise: not on every sync.
func (c *Controller) tellOverrides(fed *unstructured.Unstructured, o *overridden) {
	objKey := key(fed.GetNamespace(), fed.GetName())
	var told toldOverrides
	if v, ok := c.overridesTold.Load(objKey); ok {
		told = v.(toldOverrides)
	}
	now := toldOverrides{applied: o.summary(), failed: map[string]string{}}
	if now.applied != told.applied {
		msg := "Overrides applied to " + c.what(objKey) + ": " + now.applied
		if now.applied == "" {
			msg = "No overrides apply to " + c.what(objKey) + " any more"
		}
		c.recorder.Event(fed, corev1.EventTypeNormal, ReasonOverridesApplied, msg)
	}
	for _, cl := range slices.Sorted(maps.Keys(o.failed)) {
		msg := o.failed[cl].Error()
		now.failed[cl] = msg
		if told.failed[cl] != msg {
			overrideFailures.WithLabelValues(c.typ.Name, cl).Inc()
			c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonOverrideFailed,
				"Overrides of %s failed in cluster %s, whose copy is left as it was: %v", c.what(objKey), cl, msg)
		}
	}
	if now.applied == "" && len(now.failed) == 0 {
		c.overridesTold.Delete(objKey)
		return
	}
	c.overridesTold.Store(objKey, now)
}

// summary says which rules applied where: "rule 0 in clusters c1, c2;
// rule 1 in cluster c2"; "" when none.
func (o *overridden) summary() string {
	where := map[int][]string{}
	for cl, rules := range o.applied {
		for _, r := range rules {
			where[r] = append(where[r], cl)
		}
	}
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(where)) {
		names := where[r]
		slices.Sort(names)
		in := "cluster "
		if len(names) > 1 {
			in = "clusters "
		}
		parts = append(parts, fmt.Sprintf("rule %d in %s%s", r, in, strings.Join(names, ", ")))
	}
	return strings.Join(parts, "; ")
}
