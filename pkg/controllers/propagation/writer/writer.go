package writer

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/syncmetrics"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer/guard"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer/internal/queues"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/membercluster"
)

// FieldManager is the server-side apply field manager of member writes.
const FieldManager = "federation-controller-manager"

// Config tunes a writer.
type Config struct {
	// Workers write to each member cluster in parallel.
	Workers int
	// MemberTimeout bounds every call to a member cluster.
	MemberTimeout time.Duration
	// DefaultConflictResolution is what is done with a member's own object
	// of a federated object's name when the federated object does not say
	// (federationv1beta1.ConflictResolutionAnnotation): "abort" (or "")
	// leaves it and reports the conflict, "adopt" takes it over.
	DefaultConflictResolution string
	// LocalSecretTypes are the Secret types that stay at the federation
	// (federatedtypes.LocalWith); nil means
	// federatedtypes.DefaultLocalSecretTypes.
	LocalSecretTypes []string
}

// Members is what the writer needs of the member clusters: their caches
// of our copies, and their clients.
type Members interface {
	Federation() string
	FederationUID() string
	Clusters() []*federationv1beta1.Cluster
	Usable(cluster string) bool
	Get(cluster string, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool)
	Synced(cluster string, gvr schema.GroupVersionResource) bool
	Client(cluster string) (dynamic.Interface, error)
	Apply(ctx context.Context, cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, fieldManager string) (*metav1.PartialObjectMetadata, error)
	Create(ctx context.Context, cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, fieldManager string) (*metav1.PartialObjectMetadata, error)
	NamespaceObjects(ctx context.Context, cluster, namespace string) ([]membercluster.Object, error)
	ListLive(ctx context.Context, cluster string, gvr schema.GroupVersionResource, namespace, selector string) ([]metav1.PartialObjectMetadata, error)
}

// The tasks the writer is given.
type (
	Task        = queues.Task
	ClusterTask = queues.ClusterTask
	Action      = queues.Action
)

// The actions of a task.
const (
	Apply   = queues.Apply
	Unplace = queues.Unplace
	Delete  = queues.Delete
	Orphan  = queues.Orphan
)

// Writer writes the copies of one federated type's objects to the members.
type Writer struct {
	typ *federatedtypes.Type
	// fed reads the federation: the type's objects, namespaces, and what
	// copies name.
	fed dynamic.Interface
	// objs read the type's objects at the federation (its cache).
	objs     fedobject.Objects
	members  Members
	recorder record.EventRecorder
	opts     Config
	// queues queue the member writes per cluster.
	queues *queues.Queues
	// applied is what our writes left in the members.
	applied *appliedCopies
	// guard decides whether a write may go (package guard).
	guard *guard.Guard
	// namespaceAccess holds, by cluster/namespace, the namespaces where the
	// federation's RBAC rights were found bound (namespacerbac.go).
	namespaceAccess sync.Map
	// outcomes are the ends of writes the engine has yet to take.
	outcomes outcomes
}

// New makes the writer of one type; limiter makes the rate limiters of its
// per-cluster queues.
func New(t *federatedtypes.Type, fed dynamic.Interface, lister cache.GenericLister, members Members,
	recorder record.EventRecorder, cfg Config, limiter func() workqueue.TypedRateLimiter[string]) *Writer {
	if cfg.LocalSecretTypes == nil {
		cfg.LocalSecretTypes = federatedtypes.DefaultLocalSecretTypes
	}
	w := &Writer{
		typ: t, fed: fed, objs: fedobject.Objects{Type: t, Lister: lister, Client: fed}, members: members, recorder: recorder, opts: cfg,
		applied:  newAppliedCopies(),
		guard:    guard.New(t, fed, memberReads{members}, recorder, guard.Config{MemberTimeout: cfg.MemberTimeout, DefaultConflictResolution: cfg.DefaultConflictResolution}),
		outcomes: outcomes{ready: make(chan struct{}, 1)},
	}
	w.queues = queues.New("sync_"+t.Name, "Writing a federated "+t.Kind, cfg.Workers, limiter, queues.Handlers{
		Wanted: w.stillWanted,
		Write:  w.writeMember,
		Done:   w.written,
		Failed: func(cluster string) { syncmetrics.Errors.WithLabelValues(t.Name, cluster).Inc() },
	})
	return w
}

// Run starts the writes; Wait returns once every write has ended, after
// ctx of Run ended.
func (w *Writer) Run(ctx context.Context) { w.queues.Run(ctx) }
func (w *Writer) Wait()                   { w.queues.Wait() }

// Dispatch replaces the writes queued for an object by tasks.
func (w *Writer) Dispatch(objKey string, tasks []ClusterTask) { w.queues.Dispatch(objKey, tasks) }

// DropWrites drops an object's queued writes that do not release a copy.
func (w *Writer) DropWrites(objKey string) { w.queues.DropWrites(objKey) }

// Has reports whether a write of an object's copy in cluster is queued
// or running.
func (w *Writer) Has(objKey, cluster string) bool { return w.queues.Has(objKey, cluster) }

// Released reports whether the copy in cluster was let go (Delete, Orphan).
func (w *Writer) Released(objKey, cluster string) bool { return w.queues.Released(objKey, cluster) }

// State reports whether writes of an object are in flight, and the
// failures of its copies; tracksStatus notes that its status is being
// written meanwhile.
func (w *Writer) State(objKey string, tracksStatus bool) (inFlight bool, failures []string) {
	return w.queues.State(objKey, tracksStatus)
}

// Idle reports whether no write is pending; Len is the number of objects
// queued for a cluster.
func (w *Writer) Idle() bool             { return w.queues.Idle() }
func (w *Writer) Len(cluster string) int { return w.queues.Len(cluster) }

// WriteOnceForTesting makes a member hold what t says, in the caller and
// outside the queues.
func (w *Writer) WriteOnceForTesting(ctx context.Context, cluster string, t Task) error {
	_, err := w.writeMember(ctx, cluster, t)
	return err
}

// Clusters are the clusters with a queue; Drain runs a cluster's queued
// writes in the caller, once each (tests).
func (w *Writer) Clusters() []string { return w.queues.Clusters() }
func (w *Writer) Drain(ctx context.Context, cluster string) []error {
	return w.queues.Drain(ctx, cluster)
}

// Forget drops what is known of an object that is gone: its writes,
// and what its guard knows.
func (w *Writer) Forget(objKey string) {
	w.queues.Forget(objKey)
	w.guard.Forget(objKey)
}

// ForgetClusters drops the queues and memory of clusters not joined.
func (w *Writer) ForgetClusters(joined func(cluster string) bool) {
	w.queues.ForgetClusters(joined)
	w.guard.ForgetClusters(joined)
}

// NamespaceChanged forgets what was read live of a member namespace, when
// a member event of it comes.
func (w *Writer) NamespaceChanged(cluster, ns string) { w.guard.NamespaceChanged(cluster, ns) }

// ReferencesCached reports whether the member cache holds as ours what a
// copy in sync names (guard.ReferencesCached); else the copy is sent to
// the writer, which checks it live.
func (w *Writer) ReferencesCached(cluster string, desired *unstructured.Unstructured) bool {
	return w.guard.ReferencesCached(cluster, desired)
}

// CheckUnheld looks for what copies in sync name that the members may have
// made meanwhile, and returns the keys of the objects to reconcile again
// (guard.CheckUnheld).
func (w *Writer) CheckUnheld(ctx context.Context) []string { return w.guard.CheckUnheld(ctx) }

// Seen notes a member watch event of a copy.
func (w *Writer) Seen(cluster, objKey string) { w.applied.seen(cluster, objKey) }

// IsEcho reports whether the member cache holds a copy exactly as our
// last write left it, or the copy is being written right now (the write's
// answer may come after the watch event; its end checks it then): such
// an event is only our write's echo. Without this, an object propagated
// to N members was reconciled again on each of the N events, each time
// checking all N copies.
func (w *Writer) IsEcho(cluster, objKey string) bool {
	return w.holdsOurWrite(cluster, objKey) || w.queues.Writing(cluster, objKey)
}

// stillWanted reports whether a task should run: its cluster is Ready and,
// unless the task lets the copy go, its object is neither gone nor being
// deleted (the deletion handles it).
func (w *Writer) stillWanted(cluster string, t Task) bool {
	if !w.members.Usable(cluster) {
		return false
	}
	if t.Action.Releases() {
		return true
	}
	fed, err := w.objs.Get(t.Fed.GetNamespace(), t.Fed.GetName())
	return err == nil && fed.GetDeletionTimestamp() == nil
}

// local reports whether a federated object stays at the federation.
func (w *Writer) local(fed *unstructured.Unstructured) bool {
	return federatedtypes.LocalWith(fed, w.opts.LocalSecretTypes)
}

// Known reports whether our write left, or a sync found ours, the copy of
// objKey in cluster.
func (w *Writer) Known(cluster, objKey string) bool {
	_, ok := w.applied.get(cluster, objKey)
	return ok
}

// memberReads gives the guard live reads of members, and no client.
type memberReads struct{ Members }

func (m memberReads) GetLive(ctx context.Context, cluster string, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	client, err := m.Client(cluster)
	if err != nil {
		return nil, err
	}
	return client.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
}
