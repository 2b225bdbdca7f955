package memberevents

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// eventWriter writes the mirrored events at the federation apiserver.
type eventWriter struct {
	events  typedcorev1.EventsGetter
	timeout time.Duration
}

// write creates ev, or patches its count, message and last time when it
// exists, and returns the count the federation holds after it. An event
// of that name already there (written before a restart) is taken over
// when it is the same event: its count is kept when larger.
func (w *eventWriter) write(ctx context.Context, ev *corev1.Event, create bool) (int32, error) {
	cluster := ev.Source.Host
	what := fmt.Sprintf("event %s/%s of %s %s from cluster %s", ev.Namespace, ev.Name, ev.InvolvedObject.Kind, ev.InvolvedObject.Name, cluster)
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	client := w.events.Events(ev.Namespace)
	if create {
		writes.WithLabelValues(cluster, "create").Inc()
		created, err := client.Create(ctx, ev, metav1.CreateOptions{})
		if err == nil {
			return created.Count, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return 0, fmt.Errorf("creating %s: %w", what, err)
		}
		existing, err := client.Get(ctx, ev.Name, metav1.GetOptions{})
		if err != nil {
			return 0, fmt.Errorf("reading %s, which exists: %w", what, err)
		}
		if !sameEvent(existing, ev) {
			return 0, fmt.Errorf("%s: an event of that name says something else: left as it is", what)
		}
		ev.Count = max(ev.Count, existing.Count)
		if existing.FirstTimestamp.Before(&ev.FirstTimestamp) && !existing.FirstTimestamp.IsZero() {
			ev.FirstTimestamp = existing.FirstTimestamp
		}
	}
	writes.WithLabelValues(cluster, "patch").Inc()
	patch, err := json.Marshal(map[string]any{"count": ev.Count, "message": ev.Message,
		"firstTimestamp": ev.FirstTimestamp, "lastTimestamp": ev.LastTimestamp})
	if err != nil {
		return 0, err
	}
	patched, err := client.Patch(ctx, ev.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		// Gone with the federation's event TTL: it starts again.
		writes.WithLabelValues(cluster, "create").Inc()
		created, err := client.Create(ctx, ev, metav1.CreateOptions{})
		if err != nil {
			return 0, fmt.Errorf("creating %s again: %w", what, err)
		}
		return created.Count, nil
	}
	if err != nil {
		return 0, fmt.Errorf("updating %s: %w", what, err)
	}
	return patched.Count, nil
}

// sameEvent reports whether an event found under a mirrored event's name
// is that event (and not, by a hash collision, another).
func sameEvent(a, b *corev1.Event) bool {
	return a.Source == b.Source && a.InvolvedObject.UID == b.InvolvedObject.UID && a.Type == b.Type && a.Reason == b.Reason
}
