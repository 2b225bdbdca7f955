package faults_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/federation-v1/federation/pkg/poll"
)

// writerWorkers is how many writes the writer has in flight.
const writerWorkers = 16

// opDeadline bounds the retries of one write: a fault the federation
// survives must not keep a client from writing for longer.
const opDeadline = 2 * time.Minute

// writer writes a case's objects at the federation as a real client would:
// a write failing for the fault (connection refused or reset, a timeout, a
// 5xx or 429) is retried with backoff, and a retried create that finds its
// object (AlreadyExists) or a retried delete that does not (NotFound) is
// done: the attempt before succeeded but its answer was lost. It keeps what
// the federation acknowledged, which the verifier expects to find.
type writer struct {
	client kubernetes.Interface
	ns     string

	// acked counts acknowledged writes, for striking faults by progress.
	acked atomic.Int64
	// retries counts attempts after the first.
	retries atomic.Int64
	// lastAck is when the latest write was acknowledged (unix ns).
	lastAck atomic.Int64

	mu sync.Mutex
	// want is what the federation acknowledged: the objects that must exist
	// at the federation and in every member, with this content.
	want state
}

// state is the content of a case's ConfigMaps and Deployments by name.
type state struct {
	ConfigMaps  map[string]map[string]string
	Deployments map[string]deploymentState
}

func newState() state {
	return state{ConfigMaps: map[string]map[string]string{}, Deployments: map[string]deploymentState{}}
}

func newWriter(client kubernetes.Interface, ns string) *writer {
	return &writer{client: client, ns: ns, want: newState()}
}

// op is one write and what the federation holds once it is acknowledged.
type op struct {
	what string
	// do makes one attempt; retried is false on the first.
	do func(ctx context.Context, retried bool) error
	// acked records the acknowledged write in want.
	acked func(want state)
}

// phase is a batch of writes under way.
type phase struct {
	done chan struct{}
	err  error
}

// wait waits for the phase's writes and returns the first that failed
// for good.
func (p *phase) wait() error {
	<-p.done
	return p.err
}

// finished reports whether every write of the phase returned.
func (p *phase) finished() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// start runs ops with writerWorkers in flight.
func (w *writer) start(ops []op) *phase {
	p := &phase{done: make(chan struct{})}
	work := make(chan op)
	var wg sync.WaitGroup
	var once sync.Once
	for range writerWorkers {
		wg.Go(func() {
			for o := range work {
				if err := w.exec(o); err != nil {
					once.Do(func() { p.err = err })
				}
			}
		})
	}
	go func() {
		for _, o := range ops {
			work <- o
		}
		close(work)
		wg.Wait()
		close(p.done)
	}()
	return p
}

// run is start and wait.
func (w *writer) run(ops []op) error { return w.start(ops).wait() }

// exec writes o, retrying what a fault may cause.
func (w *writer) exec(o op) error {
	ctx, cancel := context.WithTimeout(context.Background(), opDeadline)
	defer cancel()
	delay := 100 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := o.do(ctx, attempt > 0)
		if err == nil {
			w.mu.Lock()
			o.acked(w.want)
			w.mu.Unlock()
			w.acked.Add(1)
			w.lastAck.Store(time.Now().UnixNano())
			return nil
		}
		if !retriable(err) || ctx.Err() != nil {
			return fmt.Errorf("%s in %s (attempt %d): %w", o.what, w.ns, attempt+1, err)
		}
		w.retries.Add(1)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s in %s: still failing after %s: %w", o.what, w.ns, opDeadline, err)
		case <-time.After(delay + rand.N(delay/5)): // a client's backoff, not a wait for convergence
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// retriable tells the failures a client retries: those of the transport
// (refused, reset, EOF, timeout) and the server's 5xx, 429 and timeouts.
// What the server refused for the request itself (4xx) is final.
func retriable(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	code := status.Status().Code
	return code >= 500 || code == 429 || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
}

// lastAckTime is when the latest write was acknowledged.
func (w *writer) lastAckTime() time.Time { return time.Unix(0, w.lastAck.Load()) }

// expected returns a copy of what the federation acknowledged.
func (w *writer) expected() state {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := newState()
	for k, v := range w.want.ConfigMaps {
		s.ConfigMaps[k] = v
	}
	for k, v := range w.want.Deployments {
		s.Deployments[k] = v
	}
	return s
}

// waitAcked waits until n writes were acknowledged: faults strike by
// progress, never after a sleep. It gives up when p ends first.
func (w *writer) waitAcked(p *phase, n int64) error {
	return poll.UntilEvery(context.Background(), 3*time.Minute, 20*time.Millisecond,
		fmt.Sprintf("%d acknowledged writes in %s", n, w.ns), func(context.Context) error {
			if got := w.acked.Load(); got < n {
				if p.finished() {
					return poll.Abort(fmt.Errorf("the writes ended at %d: %v", got, p.err))
				}
				return fmt.Errorf("%d so far", got)
			}
			return nil
		})
}

// creates are the writes of a burst: nConfigMaps ConfigMaps with
// nDeployments Deployments spread among them.
func (w *writer) creates(nConfigMaps, nDeployments int) []op {
	var ops []op
	every := max(1, nConfigMaps/max(1, nDeployments))
	d := 0
	for i := range nConfigMaps {
		ops = append(ops, w.createConfigMap(configMapName(i)))
		if i%every == every-1 && d < nDeployments {
			ops = append(ops, w.createDeployment(d))
			d++
		}
	}
	for ; d < nDeployments; d++ {
		ops = append(ops, w.createDeployment(d))
	}
	return ops
}

func (w *writer) createConfigMap(name string) op {
	return op{
		what: "create configmap " + name,
		do: func(ctx context.Context, retried bool) error {
			_, err := w.client.CoreV1().ConfigMaps(w.ns).Create(ctx, newConfigMap(w.ns, name), metav1.CreateOptions{})
			if retried && apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		},
		acked: func(want state) { want.ConfigMaps[name] = configMapData(name, 1) },
	}
}

func (w *writer) createDeployment(i int) op {
	d := newDeployment(w.ns, i)
	return op{
		what: "create deployment " + d.Name,
		do: func(ctx context.Context, retried bool) error {
			_, err := w.client.AppsV1().Deployments(w.ns).Create(ctx, d, metav1.CreateOptions{})
			if retried && apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		},
		acked: func(want state) { want.Deployments[d.Name] = stateOf(d) },
	}
}

// updates change ConfigMaps [from, to) to generation 2 (their data) and
// Deployments [dFrom, dTo) to generation 2 (their pod template and count).
// A merge patch gives the same object however often it is retried.
func (w *writer) updates(from, to, dFrom, dTo int) []op {
	var ops []op
	for i := from; i < to; i++ {
		name := configMapName(i)
		ops = append(ops, op{
			what: "update configmap " + name,
			do: func(ctx context.Context, _ bool) error {
				_, err := w.client.CoreV1().ConfigMaps(w.ns).Patch(ctx, name, types.MergePatchType, []byte(`{"data":{"gen":"2"}}`), metav1.PatchOptions{})
				return err
			},
			acked: func(want state) { want.ConfigMaps[name] = configMapData(name, 2) },
		})
	}
	for i := dFrom; i < dTo; i++ {
		d := newDeployment(w.ns, i)
		replicas := replicasOf(i, 2)
		d.Spec.Replicas = &replicas
		d.Spec.Template.Annotations[genAnnotation] = "2"
		patch := fmt.Sprintf(`{"spec":{"replicas":%d,"template":{"metadata":{"annotations":{%q:"2"}}}}}`, replicas, genAnnotation)
		ops = append(ops, op{
			what: "update deployment " + d.Name,
			do: func(ctx context.Context, _ bool) error {
				_, err := w.client.AppsV1().Deployments(w.ns).Patch(ctx, d.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
				return err
			},
			acked: func(want state) { want.Deployments[d.Name] = stateOf(d) },
		})
	}
	return ops
}

// deletes delete ConfigMaps [from, to) and Deployments [dFrom, dTo).
func (w *writer) deletes(from, to, dFrom, dTo int) []op {
	var ops []op
	gone := func(err error, retried bool) error {
		if retried && apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	for i := from; i < to; i++ {
		name := configMapName(i)
		ops = append(ops, op{
			what: "delete configmap " + name,
			do: func(ctx context.Context, retried bool) error {
				return gone(w.client.CoreV1().ConfigMaps(w.ns).Delete(ctx, name, metav1.DeleteOptions{}), retried)
			},
			acked: func(want state) { delete(want.ConfigMaps, name) },
		})
	}
	for i := dFrom; i < dTo; i++ {
		name := deploymentName(i)
		ops = append(ops, op{
			what: "delete deployment " + name,
			do: func(ctx context.Context, retried bool) error {
				return gone(w.client.AppsV1().Deployments(w.ns).Delete(ctx, name, metav1.DeleteOptions{}), retried)
			},
			acked: func(want state) { delete(want.Deployments, name) },
		})
	}
	return ops
}
