package clusterhealth

// Verdict is the health the federation shows for a member cluster.
type Verdict string

// The verdicts, as `kubectl get clusters` prints them.
const (
	Ready    Verdict = "Ready"
	NotReady Verdict = "NotReady"
	Offline  Verdict = "Offline"
)

// VerdictOf classifies one observation.
func VerdictOf(o Observation) Verdict {
	switch {
	case o.Healthy:
		return Ready
	case o.Reachable:
		return NotReady
	default:
		return Offline
	}
}

// Thresholds say how many consecutive probes must agree before a verdict changes.
type Thresholds struct {
	// Failure: probes saying NotReady or Offline before a cluster leaves Ready
	// (or moves between NotReady and Offline).
	Failure int
	// Success: probes saying Ready before a cluster becomes Ready again.
	Success int
}

// DefaultThresholds ride out one lost probe, and trust recovery at once.
var DefaultThresholds = Thresholds{Failure: 2, Success: 1}

// Tracker holds one cluster's verdict across probes. The zero value has no
// verdict yet: the first observation decides at once.
type Tracker struct {
	Thresholds Thresholds
	verdict    Verdict
	candidate  Verdict
	streak     int
}

// Verdict returns the current verdict ("" before the first observation).
func (t *Tracker) Verdict() Verdict { return t.verdict }

// Observe records a probe and returns the verdict after it, and whether it changed.
func (t *Tracker) Observe(o Observation) (Verdict, bool) {
	seen := VerdictOf(o)
	if t.verdict == "" {
		t.verdict = seen
		return seen, true
	}
	if seen == t.verdict {
		t.candidate, t.streak = "", 0
		return t.verdict, false
	}
	if seen == t.candidate {
		t.streak++
	} else {
		t.candidate, t.streak = seen, 1
	}
	need := t.Thresholds.Failure
	if seen == Ready {
		need = t.Thresholds.Success
	}
	if t.streak < max(need, 1) {
		return t.verdict, false
	}
	t.verdict, t.candidate, t.streak = seen, "", 0
	return t.verdict, true
}
