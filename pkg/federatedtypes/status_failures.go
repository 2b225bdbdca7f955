package federatedtypes

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// maxConditionMessage bounds a condition message built from several
// members' messages.
const maxConditionMessage = 1024

// fromCluster is what a member said, prefixed with its cluster's name, as
// every condition and event that names a member says it.
func fromCluster(cluster string, message any) string {
	return fmt.Sprintf("%s: %v", cluster, message)
}

// failingCondition derives a condition of type t from the members whose
// own condition t has the status failing (True for ReplicaFailure or a
// Job's Failed): each such member named with its message, in cluster
// order; the first one's reason (MemberClusters<t> when they differ); the
// latest of each of the members' times. nil when no member has it so, so
// that a healthy object shows none, as in a cluster.
func failingCondition(members []Member, t, failing string) map[string]any {
	var (
		messages []string
		reason   any
		times    = map[string]string{}
	)
	for _, m := range byCluster(members) {
		c := ConditionOf(m.Object, t)
		if c == nil || c["status"] != failing {
			continue
		}
		switch {
		case reason == nil:
			reason = c["reason"]
		case reason != c["reason"]:
			reason = "MemberClusters" + t
		}
		messages = append(messages, fromCluster(m.Cluster, c["message"]))
		for _, key := range []string{"lastUpdateTime", "lastProbeTime", "lastTransitionTime"} {
			if v, _ := c[key].(string); v > times[key] {
				times[key] = v
			}
		}
	}
	if messages == nil {
		return nil
	}
	out := map[string]any{"type": t, "status": failing, "reason": reason, "message": truncateMessage(strings.Join(messages, "; "))}
	for key, v := range times {
		out[key] = v
	}
	return out
}

// jobFailure returns, when some member's part of a Job failed, the
// conditions that say so: FailureTarget (the federated Job cannot
// complete) at once, and Failed too once every member's part finished,
// as a cluster's job controller sets them; both name the failed clusters.
// nil when none failed.
func jobFailure(members []Member, started bool) []any {
	failed := failingCondition(members, "Failed", "True")
	if failed == nil {
		return nil
	}
	target := make(map[string]any, len(failed))
	for k, v := range failed {
		target[k] = v
	}
	target["type"] = "FailureTarget"
	out := []any{target}
	for _, m := range members {
		if ConditionOf(m.Object, "Complete")["status"] != "True" && ConditionOf(m.Object, "Failed")["status"] != "True" {
			return out
		}
	}
	if started {
		// A finished Job has a startTime, and no active pods (every
		// member's part finished).
		out = append(out, failed)
	}
	return out
}

// keepFailureTarget keeps a Job's FailureTarget=True, which the
// apiserver does not let go, when the members no longer say it (the
// failed member is away): the Job then cannot be Complete either.
func keepFailureTarget(current, status map[string]any) {
	had := conditionIn(current, "FailureTarget")
	if had == nil || had["status"] != "True" || conditionIn(status, "FailureTarget") != nil {
		return
	}
	conditions, _ := status["conditions"].([]any)
	kept := []any{had}
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && (m["type"] == "Complete" || m["type"] == "SuccessCriteriaMet") {
			continue
		}
		kept = append(kept, c)
	}
	status["conditions"] = kept
	delete(status, "completionTime")
}

// conditionIn returns the condition of type t in a status, or nil.
func conditionIn(status map[string]any, t string) map[string]any {
	conditions, _ := status["conditions"].([]any)
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == t {
			return m
		}
	}
	return nil
}

// claimNotBound returns, for a claim not Bound in every member, a Bound
// condition that is False and names the members and their phase; nil when
// every member's is Bound. The why (a ProvisioningFailed, a missing
// storage class) is in the members' events, which come to the claim too.
func claimNotBound(members []Member, phase string) map[string]any {
	var messages []string
	for _, m := range byCluster(members) {
		p, _, _ := unstructured.NestedString(m.Object.Object, "status", "phase")
		if p == claimBound {
			continue
		}
		if p == "" {
			p = claimPending
		}
		messages = append(messages, fromCluster(m.Cluster, p))
	}
	if messages == nil {
		return nil
	}
	return map[string]any{"type": "Bound", "status": "False", "reason": phase, "message": truncateMessage(strings.Join(messages, "; "))}
}

// truncateMessage cuts a message to maxConditionMessage bytes of valid
// UTF-8.
func truncateMessage(s string) string {
	if len(s) <= maxConditionMessage {
		return s
	}
	s = s[:maxConditionMessage]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
