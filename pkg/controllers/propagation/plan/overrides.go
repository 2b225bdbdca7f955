package plan

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/overrides"
)

// ErrOverrideFailed says a cluster's overrides did not apply: its copy is
// left as it is.
var ErrOverrideFailed = errors.New("overrides did not apply")

// Overridden is what one reconcile did with an object's overrides.
type Overridden struct {
	// Applied are the indexes of the rules applied, by cluster.
	Applied map[string][]int
	// Failed are the errors of the clusters whose rules failed.
	Failed map[string]error
}

// DesiredIn returns what one cluster is sent, and its hash.
type DesiredIn func(cluster string) (*unstructured.Unstructured, string, error)

// WithOverrides returns desiredIn with fed's overrides applied to the copy
// of each placed cluster, hashed again (so that drift repair restores
// each cluster's own version), and a record of what was applied. A cluster
// no rule chooses gets the copy unchanged, with the same hash. The error
// says the annotation is invalid (admission keeps such objects out).
// The clusters are the Ready ones (their labels choose rules), federation
// the federation's name (for the pod marks).
func WithOverrides(t *federatedtypes.Type, federation string, fed *unstructured.Unstructured, clusters []*federationv1beta1.Cluster,
	placed map[string]bool, desiredIn DesiredIn) (DesiredIn, *Overridden, error) {
	done := &Overridden{Applied: map[string][]int{}, Failed: map[string]error{}}
	rules, err := overrides.ForObject(fed.GetAnnotations())
	if err != nil || len(rules) == 0 {
		return desiredIn, done, err
	}
	clusterLabels := map[string]map[string]string{}
	for _, cl := range clusters {
		clusterLabels[cl.Name] = cl.Labels
	}
	return func(cluster string) (*unstructured.Unstructured, string, error) {
		d, h, err := desiredIn(cluster)
		if err != nil || !placed[cluster] {
			return d, h, err
		}
		obj, applied, err := overrides.Apply(rules, cluster, clusterLabels[cluster], d.Object, field.NewPath("overrides"))
		if err != nil {
			done.Failed[cluster] = err
			return nil, "", fmt.Errorf("%w: %v", ErrOverrideFailed, err)
		}
		if len(applied) == 0 {
			return d, h, nil
		}
		done.Applied[cluster] = applied
		out := &unstructured.Unstructured{Object: obj}
		if t.Pods != nil {
			// The marks again: a rule may not make a copy select (or
			// claim) what is not the federation's.
			t.Pods.Mark(out, federation)
		}
		// (Hashed again without the former hash.)
		return DesiredFor(out, nil, "", nil)
	}, done, nil
}

// Failures are the clusters' override errors, for the Propagated condition.
func (o *Overridden) Failures() []string {
	var out []string
	for _, cl := range slices.Sorted(maps.Keys(o.Failed)) {
		out = append(out, fmt.Sprintf("cluster %s: %v (the copy there is left as it was)", cl, o.Failed[cl]))
	}
	return out
}

// Summary says which rules applied where: "rule 0 in clusters c1, c2;
// rule 1 in cluster c2"; "" when none.
func (o *Overridden) Summary() string {
	where := map[int][]string{}
	for cl, rules := range o.Applied {
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
