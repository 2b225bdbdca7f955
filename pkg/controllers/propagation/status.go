package propagation

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/release"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// writeStatus brings the members' status back to the federated object,
// writing only what changed. rolled says every selected member holds and
// observed the current object.
// failures are the members' errors, for the Propagated condition, which
// stays as it was while copies are still being written (inFlight).
// planned is the ReplicasPlaced condition of a divided workload, or nil.
// fed is shared with the member writes of the object still in flight, so
// what is written goes on a copy.
func (c *Controller) writeStatus(ctx context.Context, fed *unstructured.Unstructured, members []federatedtypes.Member, rolled, inFlight bool, failures []string, planned *condition) error {
	if c.typ.Endpoints {
		for i := range members {
			members[i].ReadyEndpoints = c.readyEndpoints(ctx, members[i])
		}
	}
	status, annotations := c.typ.Status(members)
	what := fmt.Sprintf("%s %s", c.typ.Kind, fedobject.Key(fed.GetNamespace(), fed.GetName()))
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
			updated, err := c.objs.Resource(fed.GetNamespace()).Update(ctx, fed, metav1.UpdateOptions{})
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
	if c.typ.ObservedGeneration {
		observed, _, _ := unstructured.NestedInt64(current, "observedGeneration")
		if rolled {
			observed = fed.GetGeneration()
		}
		if observed > 0 {
			status["observedGeneration"] = observed
		}
	}
	if c.typ.Settle != nil {
		c.typ.Settle(current, status)
	}
	if c.typ.Complete != nil {
		c.typ.Complete(fed, status, rolled)
	}
	if c.typ.Conditions {
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
	if _, err := c.objs.Resource(fed.GetNamespace()).UpdateStatus(ctx, fed, metav1.UpdateOptions{}); err != nil {
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

// PropagatedCondition is the status condition that says whether every
// selected member holds the federated object.
const PropagatedCondition = "Propagated"

// maxMessage bounds a condition's message.
const maxMessage = 1024

// propagated returns the Propagated condition for the members' errors,
// keeping the existing one (and its times) when nothing changed, so that
// an object at rest is never written. While copies are still being written
// (inFlight) it is the existing one, or nil when there is none yet.
func propagated(current map[string]any, failures []string, inFlight bool, now time.Time) map[string]any {
	if inFlight {
		conditions, _ := current["conditions"].([]any)
		for _, e := range conditions {
			if m, ok := e.(map[string]any); ok && m["type"] == PropagatedCondition {
				return m
			}
		}
		return nil
	}
	c := condition{Type: PropagatedCondition, Status: "True", Reason: "Propagated", Message: "every selected member cluster holds the object"}
	if len(failures) > 0 {
		failures = slices.Sorted(slices.Values(failures))
		c.Status, c.Reason, c.Message = "False", "MemberClusterError", strings.Join(failures, "; ")
	}
	return c.keep(current, now)
}

// condition is a status condition the controller sets.
type condition struct {
	Type, Status, Reason, Message string
}

// keep returns the condition as a status value: the existing one of its
// type (with its times) when nothing changed, else a new one stamped now.
func (c condition) keep(current map[string]any, now time.Time) map[string]any {
	if len(c.Message) > maxMessage {
		c.Message = c.Message[:maxMessage]
	}
	conditions, _ := current["conditions"].([]any)
	for _, e := range conditions {
		m, ok := e.(map[string]any)
		if ok && m["type"] == c.Type && m["status"] == c.Status && m["reason"] == c.Reason && m["message"] == c.Message {
			return m
		}
	}
	ts := now.UTC().Format(time.RFC3339)
	return map[string]any{"type": c.Type, "status": c.Status, "reason": c.Reason, "message": c.Message,
		"lastUpdateTime": ts, "lastTransitionTime": ts}
}

// writeRefused sets the Propagated condition of a refused object to False
// with ReasonNotPropagated, in place of the one it had, leaving the rest of
// its status; nothing is written when it is already so.
func (c *Controller) writeRefused(ctx context.Context, key, message string) error {
	cached, err := c.objs.Get(fedobject.SplitKey(key))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	fed := cached.DeepCopy()
	current, _, _ := unstructured.NestedMap(fed.Object, "status")
	want := condition{Type: PropagatedCondition, Status: "False", Reason: release.ReasonNotPropagated, Message: message}.keep(current, time.Now())
	conditions, _ := current["conditions"].([]any)
	conditions = slices.Clone(conditions)
	i := slices.IndexFunc(conditions, func(e any) bool {
		m, ok := e.(map[string]any)
		return ok && m["type"] == PropagatedCondition
	})
	if i >= 0 {
		conditions[i] = want
	} else {
		conditions = append(conditions, want)
	}
	status := maps.Clone(current)
	if status == nil {
		status = map[string]any{}
	}
	status["conditions"] = conditions
	if sameJSON(current, status) {
		return nil
	}
	fed.Object["status"] = status
	if _, err := c.objs.Resource(fed.GetNamespace()).UpdateStatus(ctx, fed, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("writing status of %s: %w", c.objs.What(key), err)
	}
	return nil
}
