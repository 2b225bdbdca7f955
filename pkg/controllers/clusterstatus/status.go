package clusterstatus

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	fedvalidation "github.com/federation-v1/federation/pkg/apis/federation/validation"
	"github.com/federation-v1/federation/pkg/clusterhealth"
)

// Condition reasons.
const (
	ReasonReady        = "ClusterReady"
	ReasonNotReady     = "ClusterNotReady"
	ReasonNotReachable = "ClusterNotReachable"
	ReasonReachable    = "ClusterReachable"
	// An agent member's tunnel is not open to the federation.
	ReasonTunnelDown = "TunnelDown"
	// An agent member's tunnel is open, but its API server did not answer
	// the agent.
	ReasonMemberUnreachable = "MemberUnreachable"
)

// heartbeat is how often the status is written although nothing changed,
// so that lastProbeTime shows the controller is alive without a write on
// every probe.
const heartbeat = time.Minute

// desiredStatus returns the status for verdict, given the previous status and
// the latest observation, and whether it differs enough from prev to be
// written. Transition times move only when a condition's status changes.
func desiredStatus(prev federationv1beta1.ClusterStatus, verdict clusterhealth.Verdict, obs clusterhealth.Observation, now time.Time) (federationv1beta1.ClusterStatus, bool) {
	ready := federationv1beta1.ClusterCondition{Type: federationv1beta1.ClusterReady}
	offline := federationv1beta1.ClusterCondition{Type: federationv1beta1.ClusterOffline, Status: corev1.ConditionFalse, Reason: ReasonReachable}
	switch verdict {
	case clusterhealth.Ready:
		ready.Status, ready.Reason, ready.Message = corev1.ConditionTrue, ReasonReady, "/readyz responded with ok"
	case clusterhealth.NotReady:
		ready.Status, ready.Reason = corev1.ConditionFalse, ReasonNotReady
	default:
		ready.Status, ready.Reason = corev1.ConditionUnknown, ReasonNotReachable
		offline.Status, offline.Reason = corev1.ConditionTrue, ReasonNotReachable
	}
	if clusterhealth.VerdictOf(obs) == verdict && verdict != clusterhealth.Ready {
		ready.Message, offline.Message = obs.Message, obs.Message
		if obs.Reason != "" {
			ready.Reason = obs.Reason
		}
	} else if old := findCondition(prev.Conditions, federationv1beta1.ClusterReady); old != nil && old.Status == ready.Status && verdict != clusterhealth.Ready {
		// Still within the threshold: keep what was said when the verdict was made.
		ready.Message, offline.Message = old.Message, old.Message
		if old.Reason != "" {
			ready.Reason = old.Reason
		}
	}
	ready.Message, offline.Message = truncate(ready.Message), truncate(offline.Message)

	// Zones and region written before they were validated would make the
	// apiserver refuse every status write: they are dropped.
	next := federationv1beta1.ClusterStatus{Zones: dnsLabels(prev.Zones), Region: prev.Region}
	if len(validation.IsDNS1123Label(next.Region)) > 0 {
		next.Region = ""
	}
	if obs.Healthy && obs.Message == "" {
		next.Zones, next.Region = obs.Zones, obs.Region
	}
	changed := !slices.Equal(next.Zones, prev.Zones) || next.Region != prev.Region
	for _, c := range []federationv1beta1.ClusterCondition{ready, offline} {
		c.LastProbeTime = metav1.NewTime(now)
		c.LastTransitionTime = metav1.NewTime(now)
		if old := findCondition(prev.Conditions, c.Type); old != nil {
			if old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
			if old.Status != c.Status || old.Reason != c.Reason || old.Message != c.Message || now.Sub(old.LastProbeTime.Time) >= heartbeat {
				changed = true
			}
		} else {
			changed = true
		}
		next.Conditions = append(next.Conditions, c)
	}
	return next, changed
}

// maxMessage bounds a condition's message, well within what the
// apiserver accepts.
const maxMessage = 4096

func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return s[:maxMessage] + "..."
}

// dnsLabels returns the values that are DNS-1123 labels, at most
// MaxZones of them.
func dnsLabels(values []string) []string {
	var out []string
	for _, v := range values {
		if len(validation.IsDNS1123Label(v)) == 0 && len(out) < fedvalidation.MaxZones {
			out = append(out, v)
		}
	}
	return out
}

func findCondition(conditions []federationv1beta1.ClusterCondition, t federationv1beta1.ClusterConditionType) *federationv1beta1.ClusterCondition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}
