package release

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// strayInterval is how often each controller counts its strays: a count
// from the caches, so cheap, but nothing needs it sooner.
const strayInterval = 30 * time.Second

// strayCopies counts, per member and type, the copies of this federation
// whose federated object is gone (after a restore of an older backup, say).
// They are never deleted automatically: `kubefed strays` lists them and
// cleans them on request.
var strayCopies = metrics.NewGaugeVec(&metrics.GaugeOpts{
	Namespace: "federation", Name: "stray_copies",
	Help:           "Member objects labelled as this federation's copies whose federated object does not exist, by cluster and federated type; never deleted automatically (see kubefed strays).",
	StabilityLevel: metrics.ALPHA,
}, []string{"cluster", "type"})

func init() {
	legacyregistry.MustRegister(strayCopies)
}

// Strays lists, per usable cluster whose cache of the type has synced, the
// copies of ours whose federated object is not in the federation's cache.
func (r *Releaser) Strays() map[string][]metav1.Object {
	return r.straysIn(func(string) bool { return true })
}

// straysIn is Strays of the clusters in says yes to.
func (r *Releaser) straysIn(in func(cluster string) bool) map[string][]metav1.Object {
	selector := labels.SelectorFromSet(labels.Set{federationv1beta1.FederationLabel: r.members.Federation()})
	out := map[string][]metav1.Object{}
	for _, cl := range r.members.Clusters() {
		if !r.members.Synced(cl.Name, r.typ.Resource) || !in(cl.Name) {
			continue
		}
		var found []metav1.Object
		// Every copy of the type, every 30 s: read as cached, unconverted.
		for _, obj := range r.members.ListMetadata(cl.Name, r.typ.Resource, metav1.NamespaceAll, selector) {
			// The federation's own objects in a member (join's token in
			// federation-system) carry our label but are no copies.
			if _, never := federatedtypes.NeverPropagatedIn(r.never, r.typ.Resource.GroupResource(), obj.GetNamespace(), obj.GetName()); never || !r.ourCopy(obj) {
				continue
			}
			// A copy whose object has a tombstone is being deleted.
			if _, err := r.objs.Get(obj.GetNamespace(), obj.GetName()); apierrors.IsNotFound(err) && !r.tombstoned(fedobject.Key(obj.GetNamespace(), obj.GetName())) {
				found = append(found, obj)
			}
		}
		out[cl.Name] = found
	}
	return out
}

// strayCounter publishes the strays of one controller and logs each once.
type strayCounter struct {
	mu sync.Mutex
	// clusters are those with a published count, to drop when they go.
	clusters sets.Set[string]
	// logged are the strays told, by cluster/namespace/name/uid.
	logged sets.Set[string]
}

// CountStrays publishes the controller's strays every strayInterval until
// ctx ends. It reads caches only and writes nothing anywhere.
func (r *Releaser) CountStrays(ctx context.Context) {
	sc := &strayCounter{clusters: sets.New[string](), logged: sets.New[string]()}
	wait.UntilWithContext(ctx, func(ctx context.Context) { sc.publish(ctx, r.typ.Name, r.Strays()) }, strayInterval)
}

// publish sets the gauge of each cluster in strays, drops those of
// clusters no longer counted, and logs new strays at -v=2.
func (sc *strayCounter) publish(ctx context.Context, typ string, strays map[string][]metav1.Object) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	logger := klog.FromContext(ctx)
	seen := sets.New[string]()
	for cluster, objs := range strays {
		strayCopies.WithLabelValues(cluster, typ).Set(float64(len(objs)))
		for _, obj := range objs {
			id := cluster + "/" + obj.GetNamespace() + "/" + obj.GetName() + "/" + string(obj.GetUID())
			seen.Insert(id)
			if !sc.logged.Has(id) {
				logger.V(2).Info("Stray copy: its federated object does not exist; left in place (kubefed strays lists and cleans strays)",
					"cluster", cluster, "namespace", obj.GetNamespace(), "name", obj.GetName())
			}
		}
	}
	for cluster := range sc.clusters {
		if _, ok := strays[cluster]; !ok {
			strayCopies.DeleteLabelValues(cluster, typ)
		}
	}
	sc.clusters = sets.KeySet(strays)
	// A stray that went and comes back is told again.
	sc.logged = seen
}
