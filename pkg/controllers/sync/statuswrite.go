package sync

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// writeStatus brings the members' status back to the federated object,
// writing only what changed. rolled says every selected member holds and
// observed the current object.
// failures are the members' errors, for the Propagated condition, which
// stays as it was while copies are still being written (inFlight).
// planned is the ReplicasPlaced condition of a divided workload, or nil.
// fed is shared with the member writes of the object still in flight, so
// what is written goes on a copy.
func (c *Controller) writeStatus(ctx context.Context, fed *unstructured.Unstructured, members []Member, rolled, inFlight bool, failures []string, planned *condition) error {
	if c.adapter.Endpoints {
		for i := range members {
			members[i].ReadyEndpoints = c.readyEndpoints(ctx, members[i])
		}
	}
	status, annotations := c.adapter.Status(members)
	what := fmt.Sprintf("%s %s", c.adapter.Kind, key(fed.GetNamespace(), fed.GetName()))
	if len(annotations) > 0 {
		have := fed.GetAnnotations()
		want := maps.Clone(have)
		if want == nil {
			want = map[string]string{}
		}
		for k, v := range annotations {
			if v == "" {
				delete(want, k)
			} else {
				want[k] = v
			}
		}
		if !maps.Equal(have, want) {
			fed = fed.DeepCopy()
			fed.SetAnnotations(want)
			updated, err := c.resource(fed.GetNamespace()).Update(ctx, fed, metav1.UpdateOptions{})
			if err != nil {
				return fmt.Errorf("writing annotations of %s: %w", what, err)
			}
			fed = updated
		}
	}
	if status == nil {
		return nil
	}
	current, _, _ := unstructured.NestedMap(fed.Object, "status")
	if c.adapter.ObservedGeneration {
		observed, _, _ := unstructured.NestedInt64(current, "observedGeneration")
		if rolled {
			observed = fed.GetGeneration()
		}
		if observed > 0 {
			status["observedGeneration"] = observed
		}
	}
	if c.adapter.Settle != nil {
		c.adapter.Settle(current, status)
	}
	if c.adapter.Conditions {
		conditions, _ := status["conditions"].([]any)
		if p := propagated(current, failures, inFlight, time.Now()); p != nil {
			conditions = append(conditions, p)
		}
		if planned != nil {
			conditions = append(conditions, planned.keep(current, time.Now()))
		}
		status["conditions"] = conditions
	}
	if sameJSON(current, status) {
		return nil
	}
	fed = fed.DeepCopy()
	fed.Object["status"] = status
	if _, err := c.resource(fed.GetNamespace()).UpdateStatus(ctx, fed, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("writing status of %s: %w", what, err)
	}
	return nil
}

// sameJSON compares two JSON-like values after a round trip, so that int
// and int64 or nil and empty maps compare as the apiserver would store them.
func sameJSON(a, b map[string]any) bool {
	norm := func(m map[string]any) any {
		if len(m) == 0 {
			return nil
		}
		raw, _ := json.Marshal(m)
		var out any
		_ = json.Unmarshal(raw, &out)
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}
