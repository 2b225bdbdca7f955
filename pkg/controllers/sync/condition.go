package sync

import (
	"slices"
	"strings"
	"time"
)

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
