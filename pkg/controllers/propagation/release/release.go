package release

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// StaleRetry is how soon an object is looked at again when our cache of it
// was behind the federation apiserver.
const StaleRetry = 250 * time.Millisecond

// Config tunes the release stage.
type Config struct {
	// DeletionWait is how long the deletion of a federated object waits for
	// a selected cluster that is not Ready before giving up on its copy.
	DeletionWait time.Duration
	// NeverPropagatedNamespaces are the namespaces whose objects are never
	// propagated (refused.go); nil means
	// federatedtypes.DefaultNeverPropagatedNamespaces.
	NeverPropagatedNamespaces []string
	// LocalSecretTypes are the Secret types that stay at the federation;
	// nil means federatedtypes.DefaultLocalSecretTypes.
	LocalSecretTypes []string
}

// Members is what the release stage needs of the member clusters: their
// caches, never their clients (every member write goes through the
// writer).
type Members interface {
	Federation() string
	FederationUID() string
	Clusters() []*federationv1beta1.Cluster
	AllClusters() ([]*federationv1beta1.Cluster, error)
	Get(cluster string, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool)
	Synced(cluster string, gvr schema.GroupVersionResource) bool
	ListMetadata(cluster string, gvr schema.GroupVersionResource, namespace string, selector labels.Selector) []metav1.Object
	// Forbidden says the federation may not read gvr in cluster: nothing
	// of ours can be there (membercluster.Manager.Forbidden).
	Forbidden(cluster string, gvr schema.GroupVersionResource) bool
	// Unserved says cluster does not serve gvr (no CRD of it there):
	// nothing can be there (membercluster.Manager.Unserved).
	Unserved(cluster string, gvr schema.GroupVersionResource) bool
}

// Result is what the engine must do after a release step: the stage never
// calls the engine.
type Result struct {
	// RecheckAfter: reconcile the object again after this long.
	RecheckAfter time.Duration
	// Gone: the object is gone; forget when its change was seen.
	Gone bool
	// Refused: the Propagated condition's message of an object that is
	// never propagated, for types with conditions.
	Refused string
}

// recheck asks for the object to be reconciled again after d (the
// earliest of what was asked).
func (res *Result) recheck(d time.Duration) {
	if res.RecheckAfter == 0 || d < res.RecheckAfter {
		res.RecheckAfter = d
	}
}

// Releaser lets go of the member copies of one federated type's objects.
type Releaser struct {
	typ *federatedtypes.Type
	// fed writes finalizers of the type's objects and reads the federation
	// (tombstones, an HPA's target).
	fed dynamic.Interface
	// objs read and write the type's objects at the federation.
	objs     fedobject.Objects
	members  Members
	w        *writer.Writer
	recorder record.EventRecorder
	opts     Config
	// released holds, by key, the resourceVersion of a deleted federated
	// object whose finalizers we removed, until the cache sees it go: the
	// member events of its copies going must not make us remove them again.
	released sync.Map
	// never are the namespaces never propagated; refused holds, by key,
	// the UID of a refused object whose refusal was told (refused.go).
	never   sets.Set[string]
	refused sync.Map
	// tombstones index the tombstones of deleted objects (tombstones.go);
	// nil when they are not watched.
	tombstones cache.Indexer
	// started is when the controller started: a deletion waits for
	// clusters that are away from no earlier than that.
	started time.Time
}

// New makes the release stage of one type; its member writes go through w.
func New(t *federatedtypes.Type, fed dynamic.Interface, lister cache.GenericLister, members Members, w *writer.Writer,
	recorder record.EventRecorder, cfg Config) *Releaser {
	if cfg.LocalSecretTypes == nil {
		cfg.LocalSecretTypes = federatedtypes.DefaultLocalSecretTypes
	}
	return &Releaser{typ: t, fed: fed, objs: fedobject.Objects{Type: t, Lister: lister, Client: fed}, members: members, w: w, recorder: recorder, opts: cfg,
		never: neverPropagatedSet(cfg.NeverPropagatedNamespaces), started: time.Now()}
}

// Start notes when the controller started (started).
func (r *Releaser) Start(t time.Time) { r.started = t }

// UseTombstones has the stage read tombstones from idx, indexed by
// IndexTombstones.
func (r *Releaser) UseTombstones(idx cache.Indexer) { r.tombstones = idx }

// Forget drops what is known of an object that is gone from the cache.
func (r *Releaser) Forget(objKey string) { r.released.Delete(objKey) }

// IsLocal reports whether a federated object stays at the federation: the
// local label, or a Secret of one of the local types (Helm's releases).
func (r *Releaser) IsLocal(fed *unstructured.Unstructured) bool {
	return federatedtypes.LocalWith(fed, r.opts.LocalSecretTypes)
}
