package guard

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/syncmetrics"
)

// Drift that fights back. A repair is a write of what we last wrote
// already (the same hash) because the member changed or deleted our copy.
// A member controller that keeps changing it back (or a tenant's object
// made to provoke one) would cost member writes without end: repairs of a
// copy are budgeted (package repairbudget) and, once the budget is spent,
// the copy is left as the member has it, reported as a drift conflict,
// until the federated object changes or the budget's window passes.

// ReasonDriftConflict: a member keeps changing a copy back; the
// federation stopped repairing it.
const ReasonDriftConflict = "DriftConflict"

// errDriftConflict keeps a copy failed while its repairs are spent; its
// message is the Propagated condition's.
type errDriftConflict struct {
	what, cluster string
	repairs       int
	window, wait  time.Duration
}

// RetryAfter implements queueworker.RetryAfter: the copy is looked at
// again when its budget allows a repair.
func (e *errDriftConflict) RetryAfter() time.Duration { return e.wait }

// errRepairWaits says when the next repair of a copy may run.
type errRepairWaits struct {
	msg  string
	wait time.Duration
}

func (e *errRepairWaits) Error() string             { return e.msg }
func (e *errRepairWaits) RetryAfter() time.Duration { return e.wait }

func (e *errDriftConflict) Error() string {
	return fmt.Sprintf("%s: %s in cluster %s was changed there again after %d repairs in %s: left as the member has it; "+
		"repairs resume in %s or when the federated object changes", ReasonDriftConflict, e.what, e.cluster, e.repairs, e.window, e.wait.Round(time.Second))
}

// errRefusedByMember is a write the member refused (403, 422, 413), or
// that names what the federation never propagates (errCannotName): the
// same write is refused again until the federated object or the member
// changes, so it is tried again less and less often (package
// repairbudget's Refused), not every 30 seconds for ever.
type errRefusedByMember struct {
	err  error
	wait time.Duration
}

func (e *errRefusedByMember) Error() string             { return e.err.Error() }
func (e *errRefusedByMember) Unwrap() error             { return e.err }
func (e *errRefusedByMember) RetryAfter() time.Duration { return e.wait }

// SpaceOutRefused returns err, spaced out when the member refused the
// write; a write that went through forgets the copy's refusals.
func (g *Guard) SpaceOutRefused(cluster, objKey, hash string, err error) error {
	k := fedobject.CopyKey(cluster, objKey)
	if err == nil {
		g.refusedWrites.Forget(func(s string) bool { return s == k })
		return nil
	}
	if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) && !apierrors.IsRequestEntityTooLargeError(err) {
		return err
	}
	return &errRefusedByMember{err: err, wait: g.refusedWrites.Next(k, hash)}
}

// RepairAllowed returns nil when a write of hash to cluster may go, and an
// error when it is a repair (our last write there, lastHash, was of the
// same hash: written says there was one) the copy's budget refuses (now or
// for a while). Writes of a new hash are never budgeted: they follow the
// tenant's own changes, one write per change.
func (g *Guard) RepairAllowed(cluster string, fed *unstructured.Unstructured, hash, lastHash string, written bool) error {
	objKey := fedobject.Key(fed.GetNamespace(), fed.GetName())
	if !written || lastHash != hash {
		return nil
	}
	v := g.repairs.Take(fedobject.CopyKey(cluster, objKey), hash, time.Now())
	switch {
	case v.Allowed:
		return nil
	case v.Exhausted:
		err := &errDriftConflict{what: g.objs.What(objKey), cluster: cluster, repairs: v.Repairs, window: g.repairs.Window, wait: v.Wait}
		if v.FirstExhausted {
			syncmetrics.DriftConflicts.WithLabelValues(g.typ.Name, cluster).Inc()
			g.recorder.Event(fed, corev1.EventTypeWarning, ReasonDriftConflict, err.Error())
		}
		return err
	}
	return &errRepairWaits{wait: v.Wait, msg: fmt.Sprintf("%s in cluster %s was changed there again: repaired %d times lately, the next repair waits %s",
		g.objs.What(objKey), cluster, v.Repairs, v.Wait.Round(time.Millisecond))}
}
