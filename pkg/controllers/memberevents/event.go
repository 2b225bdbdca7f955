package memberevents

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// memberEvent is what is kept of a member's Event: its identity, what it
// is about, and the reason and message (nothing else of it travels: not
// its annotations, its source or its related object).
type memberEvent struct {
	UID       types.UID
	Namespace string
	// Involved is the object the event is about.
	Involved objectRef
	// InvolvedNamespace is the involved object's namespace; an event of
	// a namespaced object lives in that namespace.
	InvolvedNamespace string
	Type, Reason      string
	Message           string
	// Count is how many times the member saw it (count, or the series'
	// count of events.k8s.io events; at least 1).
	Count int32
	// First and Last are when it was first and last seen.
	First, Last time.Time
}

// objectRef names a member object: an event's involved object or an
// owner reference.
type objectRef struct {
	APIVersion, Kind, Name string
	UID                    types.UID
}

func (r objectRef) String() string { return fmt.Sprintf("%s %s (uid %s)", r.Kind, r.Name, r.UID) }

// slim turns a streamed Event into a memberEvent, so that nothing more of
// it is held even while a watch-list streams in. A memberEvent passes as
// it is (the stream may hand over what it already transformed).
func slim(obj any) (any, error) {
	switch o := obj.(type) {
	case *memberEvent:
		return o, nil
	case *unstructured.Unstructured:
		return fromUnstructured(o), nil
	}
	return nil, fmt.Errorf("a member event stream delivered %T", obj)
}

func fromUnstructured(u *unstructured.Unstructured) *memberEvent {
	str := func(path ...string) string {
		v, _, _ := unstructured.NestedString(u.Object, path...)
		return v
	}
	num := func(path ...string) int64 {
		v, _, _ := unstructured.NestedInt64(u.Object, path...)
		return v
	}
	e := &memberEvent{
		UID:       u.GetUID(),
		Namespace: u.GetNamespace(),
		Involved: objectRef{APIVersion: str("involvedObject", "apiVersion"), Kind: str("involvedObject", "kind"),
			Name: str("involvedObject", "name"), UID: types.UID(str("involvedObject", "uid"))},
		InvolvedNamespace: str("involvedObject", "namespace"),
		Type:              str("type"),
		// Cut at once: what waits to be resolved is bounded in size too.
		Reason:  truncate(str("reason"), maxReason),
		Message: truncate(str("message"), maxMessage),
		Count:   int32(max(1, num("count"), num("series", "count"))),
	}
	for _, t := range []string{str("firstTimestamp"), str("eventTime")} {
		if at := parseTime(t); !at.IsZero() && (e.First.IsZero() || at.Before(e.First)) {
			e.First = at
		}
	}
	for _, t := range []string{str("lastTimestamp"), str("series", "lastObservedTime"), str("eventTime"), str("firstTimestamp")} {
		if at := parseTime(t); at.After(e.Last) {
			e.Last = at
		}
	}
	if e.First.IsZero() || e.First.After(e.Last) {
		e.First = e.Last
	}
	return e
}

// parseTime reads an RFC 3339 time, with or without fractions (an
// eventTime has microseconds); the zero time when there is none.
func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
