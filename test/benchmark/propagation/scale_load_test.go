package propagation

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/federation-v1/federation/pkg/poll"
)

// The scale scenario's objects spread over scaleNamespaces namespaces.
const (
	scaleNamespaces = 5
	scaleNSPrefix   = "scale-"
)

// Kinds of the mix, as the federation's types name them.
const (
	kindConfigMap  = "configmaps"
	kindSecret     = "secrets"
	kindDeployment = "deployments"
)

var scaleKinds = []string{kindConfigMap, kindSecret, kindDeployment}

// scaleObject is one object of the mix.
type scaleObject struct {
	kind, namespace, name string
}

// scaleMix is n objects: of every 20, 9 ConfigMaps, 9 Secrets and 2
// Deployments (45%, 45%, 10%), round-robin over the namespaces.
func scaleMix(n int) []scaleObject {
	out := make([]scaleObject, n)
	for i := range out {
		kind := kindDeployment
		switch r := i % 20; {
		case r < 9:
			kind = kindConfigMap
		case r < 18:
			kind = kindSecret
		}
		out[i] = scaleObject{kind: kind, namespace: fmt.Sprintf("%s%d", scaleNSPrefix, i%scaleNamespaces), name: fmt.Sprintf("obj-%06d", i)}
	}
	return out
}

// countKinds counts the objects of each kind.
func countKinds(objects []scaleObject) map[string]int {
	out := map[string]int{}
	for _, o := range objects {
		out[o.kind]++
	}
	return out
}

// Small, realistic payloads: an application's settings, a database's
// credentials, a one-replica web server.
const scaleSettings = `log.level=info
http.port=8080
http.read-timeout=30s
cache.size=256
feature.new-checkout=false
upstream.url=http://orders.internal:8080/api/v2
`

// create creates the object at the federation.
func (bn *bench) createScaleObject(ctx context.Context, o scaleObject) error {
	meta := metav1.ObjectMeta{Name: o.name, Namespace: o.namespace, Labels: map[string]string{"app": o.name, "tier": "backend"}}
	var err error
	switch o.kind {
	case kindConfigMap:
		_, err = bn.fed.CoreV1().ConfigMaps(o.namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta,
			Data: map[string]string{"application.properties": scaleSettings, "version": "1"}}, metav1.CreateOptions{})
	case kindSecret:
		_, err = bn.fed.CoreV1().Secrets(o.namespace).Create(ctx, &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeOpaque,
			StringData: map[string]string{"username": "orders", "password": "s3cr3t-" + o.name, "host": "db.internal:5432"}}, metav1.CreateOptions{})
	case kindDeployment:
		_, err = bn.fed.AppsV1().Deployments(o.namespace).Create(ctx, deployment(o.namespace, o.name, 1, nil), metav1.CreateOptions{})
	}
	if err != nil {
		return fmt.Errorf("creating %s %s/%s at the federation: %w", o.kind, o.namespace, o.name, err)
	}
	return nil
}

// scaleLoad creates the objects at the federation and waits until every
// member holds a copy of each.
func (bn *bench) scaleLoad(ctx context.Context, objects []scaleObject) {
	n := len(objects)
	bn.scaleNamespaces(ctx)
	counter := bn.countCopies()
	defer counter.stop()
	want := countKinds(objects)
	start := time.Now()
	bn.check(parallel(n, fedWriters, func(i int) error { return bn.createScaleObject(ctx, objects[i]) }))
	created := time.Since(start)
	copies := n * len(bn.clusters)
	timeout := max(5*time.Minute, time.Duration(copies)*10*time.Millisecond)
	bn.check(poll.UntilEvery(ctx, timeout, time.Second, fmt.Sprintf("every copy of the %d objects in every member", n), func(context.Context) error {
		return counter.complete(want)
	}))
	took := time.Since(start)
	fmt.Printf("objects=%d: created at the federation in %s, every copy in every member after %s\n", n, created.Round(time.Second), took.Round(time.Second))
	// At rest means the workloads' pods too: until then the members' status
	// changes keep the controller manager busy.
	bn.check(poll.UntilEvery(ctx, timeout, 5*time.Second, "every federated Deployment reporting its replica ready", func(ctx context.Context) error {
		return bn.deploymentsReady(ctx, want[kindDeployment])
	}))
	ready := time.Since(start)
	bn.scaleAdd(n, "load: seconds to create the objects at the federation", created.Seconds(), none)
	bn.scaleAdd(n, fmt.Sprintf("load: seconds until every copy is in every member (%d copies)", copies), took.Seconds(), none)
	bn.scaleAdd(n, "load: copies/s", float64(copies)/took.Seconds(), none)
	bn.scaleAdd(n, "load: seconds until every federated Deployment reports its replica ready", ready.Seconds(), none)
}

// deploymentsReady says how many of the scale Deployments at the
// federation do not yet report their replicas ready.
func (bn *bench) deploymentsReady(ctx context.Context, want int) error {
	list, err := bn.fed.AppsV1().Deployments("").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return err
	}
	ready := 0
	for _, d := range list.Items {
		if strings.HasPrefix(d.Namespace, scaleNSPrefix) && d.Spec.Replicas != nil && d.Status.ReadyReplicas == *d.Spec.Replicas {
			ready++
		}
	}
	if ready < want {
		return fmt.Errorf("%d of %d ready", ready, want)
	}
	return nil
}

// scaleNamespaces creates the scale namespaces at the federation and
// waits until every member has them.
func (bn *bench) scaleNamespaces(ctx context.Context) {
	for i := range scaleNamespaces {
		name := fmt.Sprintf("%s%d", scaleNSPrefix, i)
		if _, err := bn.fed.CoreV1().Namespaces().Create(ctx, namespace(name), metav1.CreateOptions{}); err != nil {
			bn.b.Fatalf("creating namespace %s at the federation: %v", name, err)
		}
	}
	bn.check(poll.Until(ctx, 2*time.Minute, "the scale namespaces in every member", func(ctx context.Context) error {
		for _, c := range bn.clusters {
			for i := range scaleNamespaces {
				name := fmt.Sprintf("%s%d", scaleNSPrefix, i)
				if _, err := bn.watchers[c].CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); err != nil {
					if apierrors.IsNotFound(err) {
						return fmt.Errorf("%s not yet in %s", name, c)
					}
					return err
				}
			}
		}
		return nil
	}))
}

// copyCounter watches the federation's copies of each kind in every
// member, keeping only their names.
type copyCounter struct {
	stop     context.CancelFunc
	clusters []string
	// stores by cluster, then kind.
	stores map[string]map[string]cache.Store
}

// countCopies starts watching the copies and returns once the watches are
// established.
func (bn *bench) countCopies() *copyCounter {
	ctx, cancel := context.WithCancel(context.Background())
	cc := &copyCounter{stop: cancel, clusters: bn.clusters, stores: map[string]map[string]cache.Store{}}
	var synced []cache.InformerSynced
	for _, c := range bn.clusters {
		factory := informers.NewSharedInformerFactoryWithOptions(bn.watchers[c], 0,
			informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = fedSelector }))
		byKind := map[string]cache.SharedIndexInformer{
			kindConfigMap:  factory.Core().V1().ConfigMaps().Informer(),
			kindSecret:     factory.Core().V1().Secrets().Informer(),
			kindDeployment: factory.Apps().V1().Deployments().Informer(),
		}
		cc.stores[c] = map[string]cache.Store{}
		for kind, inf := range byKind {
			// Only the names: 150,000 copies must not weigh on the machine.
			bn.check(inf.SetTransform(func(obj any) (any, error) {
				if m, ok := obj.(metav1.Object); ok {
					return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace()}}, nil
				}
				return obj, nil
			}))
			cc.stores[c][kind] = inf.GetStore()
			synced = append(synced, inf.HasSynced)
		}
		factory.Start(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		bn.b.Fatal("watching the copies in the members")
	}
	return cc
}

// complete says which member still misses copies of which kind.
func (cc *copyCounter) complete(want map[string]int) error {
	var missing []string
	for _, c := range cc.clusters {
		for _, kind := range scaleKinds {
			got := 0
			for _, k := range cc.stores[c][kind].ListKeys() {
				if strings.HasPrefix(k, scaleNSPrefix) {
					got++
				}
			}
			if got < want[kind] {
				missing = append(missing, fmt.Sprintf("%s %d of %d %s", c, got, want[kind], kind))
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s", strings.Join(missing, ", "))
	}
	return nil
}
