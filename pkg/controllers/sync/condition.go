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
// an object at rest is never written.
func propagated(current map[string]any, failures []string, now time.Time) map[string]any {
	status, reason, message := "True", "Propagated", "every selected member cluster holds the object"
	if len(failures) > 0 {
		failures = slices.Sorted(slices.Values(failures))
		status, reason, message = "False", "MemberClusterError", strings.Join(failures, "; ")
		if len(message) > maxMessage {
			message = message[:maxMessage]
		}
	}
	conditions, _ := current["conditions"].([]any)
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if ok && m["type"] == PropagatedCondition && m["status"] == status && m["reason"] == reason && m["message"] == message {
			return m
		}
	}
	ts := now.UTC().Format(time.RFC3339)
	return map[string]any{"type": PropagatedCondition, "status": status, "reason": reason, "message": message,
		"lastUpdateTime": ts, "lastTransitionTime": ts}
}
