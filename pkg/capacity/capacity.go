// Package capacity estimates how many replicas of a federated workload a
// member cluster can run, from the workload's pods that stay unschedulable
// there. As in Federation v1, a cluster where some of a workload's pods have
// been Pending as Unschedulable for longer than a window gets a capacity of
// what it asked for minus those pods, and the planner moves the surplus to
// other clusters. The estimate is kept for a while (the pods it came from
// are deleted once the surplus moves, so they cannot tell that room came
// back), and dropped early when one of the workload's pods there is
// scheduled after all.
package capacity

import (
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/federation-v1/federation/pkg/membercluster"
)

// HoldFactor times the window is how long an estimate is kept: then the
// cluster is offered its share again, to find out whether room came back.
const HoldFactor = 5

// Workload names a federated workload whose pods are watched.
type Workload struct {
	Kind, Namespace, Name string
}

// pod is a pod seen unschedulable.
type pod struct {
	workload Workload
	since    time.Time
}

// estimate is a lowered capacity of one workload in one cluster.
type estimate struct {
	capacity int64
	at       time.Time
}

// Estimator follows the member clusters' unschedulable pods of federated
// workloads (a membercluster.Handler of PodsResource) and answers Capacity.
type Estimator struct {
	window time.Duration
	hold   time.Duration
	// exists reports whether a pod is still in the member's cache, to tell
	// a deleted pod from an update.
	exists func(cluster, namespace, name string) bool
	now    func() time.Time

	mu sync.Mutex
	// pods are the unschedulable pods by cluster, then namespace/name.
	pods map[string]map[string]pod
	// estimates by cluster, then workload.
	estimates map[string]map[Workload]estimate
	// subscribers re-plan a workload, by kind.
	subscribers map[string][]func(key string)
}

// New makes an estimator whose window is how long pods must stay
// unschedulable before they lower a cluster's capacity.
func New(window time.Duration, exists func(cluster, namespace, name string) bool) *Estimator {
	return &Estimator{window: window, hold: HoldFactor * window, exists: exists, now: time.Now,
		pods: map[string]map[string]pod{}, estimates: map[string]map[Workload]estimate{},
		subscribers: map[string][]func(string){}}
}

// Subscribe asks for enqueue(namespace/name) when the capacity of a
// workload of kind may have changed. Call it before the members start.
func (e *Estimator) Subscribe(kind string, enqueue func(key string)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.subscribers[kind] = append(e.subscribers[kind], enqueue)
}

// MemberChanged records a member pod's change.
func (e *Estimator) MemberChanged(cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	if gvr != membercluster.PodsResource {
		return
	}
	w, ok := OwnerOf(obj)
	if !ok {
		return
	}
	key := obj.GetNamespace() + "/" + obj.GetName()
	since, unschedulable := unschedulableSince(obj)
	e.mu.Lock()
	defer e.mu.Unlock()
	_, known := e.pods[cluster][key]
	switch {
	case unschedulable && e.exists(cluster, obj.GetNamespace(), obj.GetName()):
		if known {
			return
		}
		if e.pods[cluster] == nil {
			e.pods[cluster] = map[string]pod{}
		}
		e.pods[cluster][key] = pod{workload: w, since: since}
		// Look again when the pod has been unschedulable for the window.
		time.AfterFunc(time.Until(since.Add(e.window))+time.Second, func() { e.notify(w) })
	case scheduled(obj):
		delete(e.pods[cluster], key)
		if _, lowered := e.estimates[cluster][w]; lowered {
			delete(e.estimates[cluster], w)
			go e.notify(w)
		}
	default:
		delete(e.pods[cluster], key)
	}
}

// ClustersChanged needs nothing: pods of a cluster whose cache stopped are
// checked against the cache when counted.
func (e *Estimator) ClustersChanged() {}

// Capacity returns how many replicas of w cluster can run, where it was
// asked to run replicas; limited is false when nothing is known against it.
func (e *Estimator) Capacity(cluster string, w Workload, replicas int64) (capacity int64, limited bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	var stuck int64
	for key, p := range e.pods[cluster] {
		if p.workload != w {
			continue
		}
		// A pod missed while the cluster's cache was stopped is gone.
		if ns, name, _ := strings.Cut(key, "/"); !e.exists(cluster, ns, name) {
			delete(e.pods[cluster], key)
			continue
		}
		if now.Sub(p.since) >= e.window {
			stuck++
		}
	}
	est, ok := e.estimates[cluster][w]
	if ok && now.Sub(est.at) >= e.hold {
		delete(e.estimates[cluster], w)
		ok = false
	}
	// Pods left over from before the surplus moved do not lower it again.
	if stuck > 0 && (!ok || replicas > est.capacity) {
		est = estimate{capacity: max(replicas-stuck, 0), at: now}
		if e.estimates[cluster] == nil {
			e.estimates[cluster] = map[Workload]estimate{}
		}
		e.estimates[cluster][w] = est
		time.AfterFunc(e.hold+time.Second, func() { e.notify(w) })
		ok = true
	}
	return est.capacity, ok
}

func (e *Estimator) notify(w Workload) {
	e.mu.Lock()
	subs := e.subscribers[w.Kind]
	e.mu.Unlock()
	for _, enqueue := range subs {
		enqueue(w.Namespace + "/" + w.Name)
	}
}

// OwnerOf names the workload a pod belongs to: its Job, its StatefulSet,
// its ReplicaSet, or the Deployment of that ReplicaSet (whose name is the
// Deployment's and the pod-template-hash).
func OwnerOf(obj *unstructured.Unstructured) (Workload, bool) {
	owner := metav1.GetControllerOfNoCopy(obj)
	if owner == nil {
		return Workload{}, false
	}
	w := Workload{Kind: owner.Kind, Namespace: obj.GetNamespace(), Name: owner.Name}
	switch owner.Kind {
	case "Job", "StatefulSet":
	case "ReplicaSet":
		if hash := obj.GetLabels()["pod-template-hash"]; hash != "" && strings.HasSuffix(owner.Name, "-"+hash) {
			w.Kind, w.Name = "Deployment", strings.TrimSuffix(owner.Name, "-"+hash)
		}
	default:
		return Workload{}, false
	}
	return w, true
}

// unschedulableSince reports whether a pod is Pending because the scheduler
// found no node for it, and since when.
func unschedulableSince(obj *unstructured.Unstructured) (time.Time, bool) {
	if scheduled(obj) {
		return time.Time{}, false
	}
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if m["type"] != "PodScheduled" {
			continue
		}
		if m["status"] != "False" || m["reason"] != "Unschedulable" {
			return time.Time{}, false
		}
		since := obj.GetCreationTimestamp().Time
		if ts, _ := m["lastTransitionTime"].(string); ts != "" {
			if t, err := time.Parse(time.RFC3339, ts); err == nil {
				since = t
			}
		}
		return since, true
	}
	return time.Time{}, false
}

// scheduled reports whether a pod was bound to a node.
func scheduled(obj *unstructured.Unstructured) bool {
	node, _, _ := unstructured.NestedString(obj.Object, "spec", "nodeName")
	return node != ""
}
