package propagation

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// event is what a member's watch said of one ConfigMap.
type event struct {
	deleted bool
	// version is the ConfigMap's data["version"].
	version string
	at      time.Time
}

// observer records every watch event of the ConfigMaps of one namespace
// with one label in every member, with the time it arrived.
type observer struct {
	clusters []string
	stop     context.CancelFunc
	mu       sync.Mutex
	// log holds the events by cluster, then by name.
	log map[string]map[string][]event
}

// observe starts watching ConfigMaps in namespace with selector in every
// member and returns once the watches are established.
func (bn *bench) observe(namespace, selector string) *observer {
	return bn.observeIn(bn.clusters, namespace, selector)
}

// observeIn is observe in some of the members.
func (bn *bench) observeIn(clusters []string, namespace, selector string) *observer {
	ctx, cancel := context.WithCancel(context.Background())
	o := &observer{clusters: clusters, stop: cancel, log: map[string]map[string][]event{}}
	var synced []cache.InformerSynced
	for _, c := range clusters {
		o.log[c] = map[string][]event{}
		factory := informers.NewSharedInformerFactoryWithOptions(bn.watchers[c], 0, informers.WithNamespace(namespace),
			informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = selector }))
		inf := factory.Core().V1().ConfigMaps().Informer()
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { o.record(c, obj, false) },
			UpdateFunc: func(_, obj any) { o.record(c, obj, false) },
			DeleteFunc: func(obj any) { o.record(c, obj, true) },
		})
		factory.Start(ctx.Done())
		synced = append(synced, inf.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		bn.b.Fatalf("watching ConfigMaps in %s of the members", namespace)
	}
	return o
}

func (o *observer) record(cluster string, obj any, deleted bool) {
	at := time.Now()
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return
	}
	o.mu.Lock()
	o.log[cluster][cm.Name] = append(o.log[cluster][cm.Name], event{deleted: deleted, version: cm.Data["version"], at: at})
	o.mu.Unlock()
}

// condition is what an event must say.
type condition func(event) bool

func present(version string) condition {
	return func(e event) bool { return !e.deleted && e.version == version }
}

func gone(e event) bool { return e.deleted }

// reached returns, per name, when the last member first reported cond at
// or after since; names not yet reached everywhere are missing from it.
func (o *observer) reached(names []string, since time.Time, cond condition) map[string]time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[string]time.Time, len(names))
	for _, name := range names {
		var last time.Time
		everywhere := true
		for _, c := range o.clusters {
			first := time.Time{}
			for _, e := range o.log[c][name] {
				if !e.at.Before(since) && cond(e) {
					first = e.at
					break
				}
			}
			if first.IsZero() {
				everywhere = false
				break
			}
			if first.After(last) {
				last = first
			}
		}
		if everywhere {
			out[name] = last
		}
	}
	return out
}

// wait polls until every name reached cond in every member, and returns
// when the last one did.
func (o *observer) wait(names []string, since time.Time, cond condition, timeout time.Duration, what string) (map[string]time.Time, time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		got := o.reached(names, since, cond)
		if len(got) == len(names) {
			var last time.Time
			for _, at := range got {
				if at.After(last) {
					last = at
				}
			}
			return got, last, nil
		}
		if time.Now().After(deadline) {
			return got, time.Time{}, fmt.Errorf("%s: after %s, %d of %d objects had reached every one of %d members",
				what, timeout, len(got), len(names), len(o.clusters))
		}
		time.Sleep(100 * time.Millisecond) // polling interval of a measurement
	}
}

// spread tells how the copies arrived: when a tenth, half and nine tenths
// of them had (first event meeting cond at or after since), and when the
// first and the last member had all of theirs. It shows whether a run was
// slow all along, late to start, or held up by a member.
func (o *observer) spread(names []string, since time.Time, cond condition) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var all []time.Duration
	var memberDone []time.Duration
	for _, c := range o.clusters {
		var last time.Duration
		for _, name := range names {
			for _, e := range o.log[c][name] {
				if !e.at.Before(since) && cond(e) {
					d := e.at.Sub(since)
					all = append(all, d)
					last = max(last, d)
					break
				}
			}
		}
		memberDone = append(memberDone, last)
	}
	if len(all) == 0 {
		return "no copies"
	}
	slices.Sort(all)
	slices.Sort(memberDone)
	sec := func(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }
	return fmt.Sprintf("10%%/50%%/90%% of the copies after %s/%s/%s s; members complete from %s to %s s",
		sec(quantile(all, 0.1)), sec(quantile(all, 0.5)), sec(quantile(all, 0.9)), sec(memberDone[0]), sec(memberDone[len(memberDone)-1]))
}
