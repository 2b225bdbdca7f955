package propagation

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// scaleSteady creates ConfigMaps at the federation at steadyRate for
// -scale-steady, then updates them, and returns each one's latency to its
// last member copy.
func (bn *bench) scaleSteady(ctx context.Context, prefix string) (create, update []time.Duration) {
	names := objectNames(prefix, max(1, int(scaleSteadyFor.Seconds()*steadyRate)))
	o := bn.observe(fedNamespace, fedSelector)
	defer o.stop()
	create = bn.steadyPhase(o, names, "1", steadyRate, func(i int) (time.Time, error) {
		_, err := bn.fed.CoreV1().ConfigMaps(fedNamespace).Create(ctx, fedConfigMap(names[i], "1"), metav1.CreateOptions{})
		return time.Now(), err
	}, prefix+"create")
	update = bn.steadyPhase(o, names, "2", steadyRate, func(i int) (time.Time, error) {
		_, err := bn.fed.CoreV1().ConfigMaps(fedNamespace).Patch(ctx, names[i], types.MergePatchType, []byte(`{"data":{"version":"2"}}`), metav1.PatchOptions{})
		return time.Now(), err
	}, prefix+"update")
	return create, update
}

// listLatency times full LISTs of each kind at the federation, across
// every namespace: in one answer, and in pages of listPage.
func (bn *bench) listLatency(ctx context.Context, n int) {
	list := map[string]func(metav1.ListOptions) (metav1.ListInterface, int, error){
		kindConfigMap: func(lo metav1.ListOptions) (metav1.ListInterface, int, error) {
			l, err := bn.fed.CoreV1().ConfigMaps("").List(ctx, lo)
			if err != nil {
				return nil, 0, err
			}
			return l, len(l.Items), nil
		},
		kindSecret: func(lo metav1.ListOptions) (metav1.ListInterface, int, error) {
			l, err := bn.fed.CoreV1().Secrets("").List(ctx, lo)
			if err != nil {
				return nil, 0, err
			}
			return l, len(l.Items), nil
		},
		kindDeployment: func(lo metav1.ListOptions) (metav1.ListInterface, int, error) {
			l, err := bn.fed.AppsV1().Deployments("").List(ctx, lo)
			if err != nil {
				return nil, 0, err
			}
			return l, len(l.Items), nil
		},
	}
	for _, kind := range scaleKinds {
		var whole, paged []time.Duration
		items, pages := 0, 0
		for range listTries {
			start := time.Now()
			_, got, err := list[kind](metav1.ListOptions{})
			bn.check(err)
			whole = append(whole, time.Since(start))
			items = got

			start = time.Now()
			pages = 0
			cont := ""
			for first := true; first || cont != ""; first = false {
				l, _, err := list[kind](metav1.ListOptions{Limit: listPage, Continue: cont})
				bn.check(err)
				cont = l.GetContinue()
				pages++
			}
			paged = append(paged, time.Since(start))
		}
		for _, q := range []struct {
			name string
			at   float64
		}{{"p50", 0.50}, {"p99", 0.99}} {
			bn.scaleAdd(n, fmt.Sprintf("LIST %s, all namespaces (%d items) %s ms (%d tries)", kind, items, q.name, listTries), ms(quantile(whole, q.at)), none)
			bn.scaleAdd(n, fmt.Sprintf("LIST %s, all namespaces, %d pages of %d %s ms (%d tries)", kind, pages, listPage, q.name, listTries), ms(quantile(paged, q.at)), none)
		}
	}
}

// watchLatency creates ConfigMaps at the federation one after the other and
// returns, for each, the time from its create to the event of a watch of
// every namespace.
func (bn *bench) watchLatency(ctx context.Context, prefix string) []time.Duration {
	// From the current version on: no initial events of what exists.
	l, err := bn.fed.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{Limit: 1})
	bn.check(err)
	w, err := bn.fed.CoreV1().ConfigMaps("").Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	bn.check(err)
	defer w.Stop()
	names := objectNames(prefix, watchTries)
	out := make([]time.Duration, 0, len(names))
	for _, name := range names {
		start := time.Now()
		_, err := bn.fed.CoreV1().ConfigMaps(fedNamespace).Create(ctx, fedConfigMap(name, "1"), metav1.CreateOptions{})
		bn.check(err)
		bn.check(waitForAdded(w, name, time.Minute))
		out = append(out, time.Since(start))
	}
	return out
}

// waitForAdded reads w until it tells of name's creation.
func waitForAdded(w watch.Interface, name string, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("the watch ended before %s's creation", name)
			}
			if m, isObj := ev.Object.(metav1.Object); isObj && ev.Type == watch.Added && m.GetName() == name {
				return nil
			}
		case <-deadline:
			return fmt.Errorf("no event of %s's creation after %s", name, timeout)
		}
	}
}
