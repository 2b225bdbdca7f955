package capacity

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/membercluster"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pendingPod is a pod of Deployment web's ReplicaSet; unschedulable since
// at when at is set, else bound to a node.
func pendingPod(name string, at *time.Time) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
		"spec": map[string]any{}, "status": map[string]any{"phase": "Pending"}}}
	o.SetName(name)
	o.SetNamespace("ns")
	o.SetLabels(map[string]string{"pod-template-hash": "abc"})
	o.SetOwnerReferences([]metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-abc", Controller: ptr(true)}})
	if at == nil {
		o.Object["spec"] = map[string]any{"nodeName": "n1"}
		return o
	}
	o.Object["status"].(map[string]any)["conditions"] = []any{map[string]any{"type": "PodScheduled", "status": "False",
		"reason": "Unschedulable", "lastTransitionTime": at.Format(time.RFC3339)}}
	return o
}

func ptr[T any](v T) *T { return &v }

func TestUnschedulablePodsLowerCapacityAfterTheWindow(t *testing.T) {
	cached := map[string]bool{}
	e := New(time.Minute, func(_, ns, name string) bool { return cached[ns+"/"+name] })
	now := t0
	e.now = func() time.Time { return now }
	e.Subscribe("Deployment", func(string) {})
	web := Workload{Kind: "Deployment", Namespace: "ns", Name: "web"}

	for _, name := range []string{"p1", "p2"} {
		cached["ns/"+name] = true
		e.MemberChanged("c2", membercluster.PodsResource, pendingPod(name, &t0))
	}
	_, limited := e.Capacity("c2", web, 5)
	assert.False(t, limited, "not before the window")

	now = t0.Add(time.Minute)
	n, limited := e.Capacity("c2", web, 5)
	assert.True(t, limited)
	assert.Equal(t, int64(3), n, "5 asked, 2 stuck")
	_, limited = e.Capacity("c1", web, 5)
	assert.False(t, limited, "only where the pods are")
	_, limited = e.Capacity("c2", Workload{Kind: "Deployment", Namespace: "ns", Name: "other"}, 5)
	assert.False(t, limited, "only for their workload")

	// The surplus moved: the cluster now runs 3 and the stuck pods go.
	n, _ = e.Capacity("c2", web, 3)
	assert.Equal(t, int64(3), n, "left-over pods do not lower it again")
	delete(cached, "ns/p1")
	delete(cached, "ns/p2")
	e.MemberChanged("c2", membercluster.PodsResource, pendingPod("p1", &t0))
	e.MemberChanged("c2", membercluster.PodsResource, pendingPod("p2", &t0))
	now = now.Add(time.Minute)
	n, limited = e.Capacity("c2", web, 3)
	assert.True(t, limited, "the estimate holds after the pods are gone")
	assert.Equal(t, int64(3), n)

	now = t0.Add(time.Minute + HoldFactor*time.Minute)
	_, limited = e.Capacity("c2", web, 3)
	assert.False(t, limited, "then the cluster is tried again")
}

func TestAScheduledPodLiftsTheEstimate(t *testing.T) {
	e := New(time.Minute, func(string, string, string) bool { return true })
	// Real time, so that the window's timer does not fire during the test.
	since := time.Now().Truncate(time.Second)
	e.now = func() time.Time { return since.Add(2 * time.Minute) }
	enqueued := make(chan string, 1)
	e.Subscribe("Deployment", func(key string) { enqueued <- key })
	web := Workload{Kind: "Deployment", Namespace: "ns", Name: "web"}
	e.MemberChanged("c2", membercluster.PodsResource, pendingPod("p1", &since))
	n, limited := e.Capacity("c2", web, 4)
	assert.True(t, limited)
	assert.Equal(t, int64(3), n)

	e.MemberChanged("c2", membercluster.PodsResource, pendingPod("p1", nil))
	assert.Equal(t, "ns/web", <-enqueued, "re-planned")
	_, limited = e.Capacity("c2", web, 4)
	assert.False(t, limited, "room came back")
}

func TestOwnerOf(t *testing.T) {
	w, ok := OwnerOf(pendingPod("p", nil))
	assert.True(t, ok)
	assert.Equal(t, Workload{Kind: "Deployment", Namespace: "ns", Name: "web"}, w)

	p := pendingPod("p", nil)
	p.SetLabels(nil)
	w, _ = OwnerOf(p)
	assert.Equal(t, Workload{Kind: "ReplicaSet", Namespace: "ns", Name: "web-abc"}, w)

	p.SetOwnerReferences([]metav1.OwnerReference{{Kind: "Job", Name: "j", Controller: ptr(true)}})
	w, _ = OwnerOf(p)
	assert.Equal(t, Workload{Kind: "Job", Namespace: "ns", Name: "j"}, w)

	p.SetOwnerReferences([]metav1.OwnerReference{{Kind: "StatefulSet", Name: "s", Controller: ptr(true)}})
	w, _ = OwnerOf(p)
	assert.Equal(t, Workload{Kind: "StatefulSet", Namespace: "ns", Name: "s"}, w)

	p.SetOwnerReferences([]metav1.OwnerReference{{Kind: "DaemonSet", Name: "d", Controller: ptr(true)}})
	_, ok = OwnerOf(p)
	assert.False(t, ok)
}
