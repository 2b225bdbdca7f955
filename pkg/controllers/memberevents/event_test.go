package memberevents

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestOnlyTheReasonAndMessageOfAMemberEventAreKept(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Event",
		"metadata": map[string]any{"name": "web-1.abc", "namespace": "shop", "uid": "e1",
			"annotations": map[string]any{"secret": "of the member"}},
		"involvedObject": map[string]any{"apiVersion": "v1", "kind": "Pod", "name": "web-1", "namespace": "shop", "uid": "pod-uid"},
		"related":        map[string]any{"kind": "Node", "name": "n1"},
		"type":           "Warning", "reason": "FailedScheduling", "message": "0/2 nodes are available",
		"source":    map[string]any{"component": "default-scheduler", "host": "node-1"},
		"eventTime": "2026-01-01T00:00:01.000002Z",
		"series":    map[string]any{"count": int64(7), "lastObservedTime": "2026-01-01T00:05:00.000000Z"},
	}}
	out, err := slim(u)
	require.NoError(t, err)
	ev := out.(*memberEvent)
	assert.Equal(t, &memberEvent{UID: "e1", Namespace: "shop", InvolvedNamespace: "shop",
		Involved: objectRef{APIVersion: "v1", Kind: "Pod", Name: "web-1", UID: "pod-uid"},
		Type:     "Warning", Reason: "FailedScheduling", Message: "0/2 nodes are available", Count: 7,
		First: time.Date(2026, 1, 1, 0, 0, 1, 2000, time.UTC), Last: time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC)}, ev,
		"an events.k8s.io series counts; annotations, source and related object stay behind")
	again, err := slim(ev)
	require.NoError(t, err)
	assert.Same(t, ev, again, "a relist may hand over what was already cut down")

	old := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"uid": "e2", "namespace": "shop"},
		"count": int64(3), "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:01:00Z"}}
	out, _ = slim(old)
	assert.EqualValues(t, 3, out.(*memberEvent).Count)
	assert.Equal(t, time.Minute, out.(*memberEvent).Last.Sub(out.(*memberEvent).First))
	out, _ = slim(&unstructured.Unstructured{Object: map[string]any{}})
	assert.EqualValues(t, 1, out.(*memberEvent).Count, "an event happened at least once")
}
