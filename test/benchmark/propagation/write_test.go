package propagation

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// fedWriters create, update and delete at the federation in parallel: enough
// that the federation apiserver, not the client, sets the pace.
const fedWriters = 16

// refFieldManager is the reference's server-side apply field manager.
const refFieldManager = "bench-reference"

var (
	configMapsResource  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deploymentsResource = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// payload is the data every ConfigMap carries besides its version.
var payload = strings.Repeat("x", payloadBytes)

// objectNames returns prefix0000 ... for n objects.
func objectNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%04d", prefix, i)
	}
	return out
}

// parallel runs do(i) for every i below n from workers goroutines and
// returns the first error.
func parallel(n, workers int, do func(i int) error) error {
	var next atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || first.Load() != nil {
					return
				}
				if err := do(i); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	return nil
}

// fedConfigMap is a ConfigMap as created at the federation.
func fedConfigMap(name, version string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: fedNamespace},
		Data: map[string]string{"payload": payload, "version": version}}
}

// refConfigMap is what the reference applies to a member: what the
// controller manager applies (labels, a hash annotation, the data).
func refConfigMap(name, version string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": name, "namespace": refNamespace,
			"labels":      map[string]any{refLabel: "true"},
			"annotations": map[string]any{"federation.kubernetes.io/applied-hash": strings.Repeat("0", 32)},
		},
		"data": map[string]any{"payload": payload, "version": version},
	}}
}

// createAtFederation creates the ConfigMaps at the federation.
func (bn *bench) createAtFederation(ctx context.Context, names []string, version string) error {
	return parallel(len(names), fedWriters, func(i int) error {
		_, err := bn.fed.CoreV1().ConfigMaps(fedNamespace).Create(ctx, fedConfigMap(names[i], version), metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating ConfigMap %s at the federation: %w", names[i], err)
		}
		return nil
	})
}

// deleteAtFederation deletes the ConfigMaps at the federation.
func (bn *bench) deleteAtFederation(ctx context.Context, names []string) error {
	return parallel(len(names), fedWriters, func(i int) error {
		err := bn.fed.CoreV1().ConfigMaps(fedNamespace).Delete(ctx, names[i], metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting ConfigMap %s at the federation: %w", names[i], err)
		}
		return nil
	})
}

// refEverywhere runs do for every object in every member, each member with
// its own client and bn.workers objects in flight, all members at once:
// the most the controller manager's member settings allow.
func (bn *bench) refEverywhere(n int, do func(cluster string, i int) error) error {
	errs := make(chan error, len(bn.clusters))
	for _, c := range bn.clusters {
		go func() {
			errs <- parallel(n, bn.workers, func(i int) error { return do(c, i) })
		}()
	}
	var first error
	for range bn.clusters {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// refApply applies an object to a member as the reference.
func (bn *bench) refApply(ctx context.Context, cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	body, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = bn.ref[cluster].Resource(gvr).Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: refFieldManager, Force: ptr.To(true)})
	if err != nil {
		return fmt.Errorf("applying %s %s in %s: %w", gvr.Resource, obj.GetName(), cluster, err)
	}
	return nil
}

// refDelete deletes an object in a member as the reference.
func (bn *bench) refDelete(ctx context.Context, cluster string, gvr schema.GroupVersionResource, name string) error {
	err := bn.ref[cluster].Resource(gvr).Namespace(refNamespace).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %s in %s: %w", gvr.Resource, name, cluster, err)
	}
	return nil
}

// paced runs write(i) for n objects at rate per second, each in its own
// goroutine so that a slow answer does not delay the next, and returns
// what each returned (the time its latency counts from).
func paced(n, rate int, write func(i int) (time.Time, error)) ([]time.Time, error) {
	out := make([]time.Time, n)
	var first atomic.Value
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for i := range n {
		if i > 0 {
			<-tick.C
		}
		wg.Go(func() {
			at, err := write(i)
			if err != nil {
				first.CompareAndSwap(nil, err)
			}
			out[i] = at
		})
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return nil, err
	}
	return out, nil
}
