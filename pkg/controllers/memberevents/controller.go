package memberevents

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/queueworker"
)

// Name is the controller's name in --controllers.
const Name = "member-events"

// The values of Options.Types (--member-events).
const (
	TypesWarning = "Warning"
	TypesAll     = "All"
)

// maxPending bounds the member events waiting to be resolved, every
// member together; past it new ones are left out (and counted).
const maxPending = 2048

// workers resolve member events, and as many write federation events.
const workers = 2

// maxRetries bounds the retries of a member event that cannot be resolved
// or written (a member that does not answer, a refused write): it is then
// left, and a later change of it starts again.
const maxRetries = 5

// eventsResource is what is streamed from every member.
var eventsResource = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// Options tune the controller.
type Options struct {
	// Types are the member events brought to the federation: TypesWarning
	// (the default) or TypesAll (Normal ones too).
	Types string
	// Timeout bounds every read from a member and every write at the
	// federation.
	Timeout time.Duration
	// NeverPropagatedNamespaces: nothing in them is the federation's, and
	// their events are not looked at.
	NeverPropagatedNamespaces []string
}

// Members is what the controller needs of the member clusters (package
// membercluster's Manager).
type Members interface {
	ownerMembers
	Federation() string
	FederationUID() string
	Stream(gvr schema.GroupVersionResource, opts membercluster.StreamOptions, h membercluster.StreamHandler)
	HasObjectsIn(cluster, namespace string) bool
	Usable(cluster string) bool
	CachesSynced(cluster string) bool
}

// Controller brings the members' events about the copies of federated
// objects, and about what those copies own, to the federated objects.
type Controller struct {
	members Members
	// never are the namespaces whose events are not looked at.
	never sets.Set[string]
	// resolver finds the copy an event is about; fedObjects the federated
	// object of that copy.
	resolver   *resolver
	fedObjects *federatedObjects
	// mirror counts and budgets; writer writes at the federation.
	mirror *mirror
	writer *eventWriter

	// pending are the member events waiting to be resolved, the latest of
	// each, by cluster and UID; resolveQueue holds their keys.
	mu           sync.Mutex
	pending      map[pendingKey]*memberEvent
	resolveQueue workqueue.TypedRateLimitingInterface[pendingKey]
	// flushQueue holds the federation events to write.
	flushQueue workqueue.TypedRateLimitingInterface[eventKey]
}

// pendingKey names a member event.
type pendingKey struct {
	Cluster string
	UID     types.UID
}

// New makes the controller and starts streaming the members' events:
// fedEvents writes events at the federation and fedMetadata reads the
// federated objects there.
func New(members Members, fedEvents typedcorev1.EventsGetter, fedMetadata metadata.Interface, opts Options) (*Controller, error) {
	fieldSelector := ""
	switch opts.Types {
	case TypesWarning, "":
		fieldSelector = "type=" + corev1.EventTypeWarning
	case TypesAll:
	default:
		return nil, fmt.Errorf("member events %q: want %s or %s", opts.Types, TypesWarning, TypesAll)
	}
	c := &Controller{
		members:    members,
		never:      federatedtypes.NeverPropagatedNamespaces(opts.NeverPropagatedNamespaces),
		resolver:   newResolver(members, members.Federation(), members.FederationUID(), opts.Timeout),
		fedObjects: newFederatedObjects(fedMetadata, opts.Timeout),
		mirror:     newMirror(clock.RealClock{}),
		writer:     &eventWriter{events: fedEvents, timeout: opts.Timeout},
		pending:    map[pendingKey]*memberEvent{},
		resolveQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[pendingKey](),
			workqueue.TypedRateLimitingQueueConfig[pendingKey]{Name: "member-events-resolve"}),
		flushQueue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[eventKey](),
			workqueue.TypedRateLimitingQueueConfig[eventKey]{Name: "member-events-write"}),
	}
	members.Stream(eventsResource, membercluster.StreamOptions{FieldSelector: fieldSelector, Transform: slim}, c)
	return c, nil
}

// Streamed takes a member event from the stream: what cannot be the
// federation's is left at once, without a call or a cache.
func (c *Controller) Streamed(cluster string, obj any) {
	ev, ok := obj.(*memberEvent)
	if !ok || ev.Namespace == "" || ev.InvolvedNamespace != ev.Namespace || c.never.Has(ev.Namespace) {
		return
	}
	if c.members.CachesSynced(cluster) && !c.members.HasObjectsIn(cluster, ev.Namespace) {
		return
	}
	if c.mirror.known(cluster, ev) {
		return
	}
	key := pendingKey{Cluster: cluster, UID: ev.UID}
	c.mu.Lock()
	if _, had := c.pending[key]; !had && len(c.pending) >= maxPending {
		c.mu.Unlock()
		dropped.WithLabelValues(cluster, "pending").Inc()
		return
	}
	c.pending[key] = ev
	c.mu.Unlock()
	c.resolveQueue.Add(key)
}

// Run resolves and writes until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Go(func() {
		queueworker.RunWorkers(ctx, workers, c.resolveQueue, func(ctx context.Context) {
			queueworker.Run(ctx, c.resolveQueue, queueworker.Handlers[pendingKey]{Sync: c.resolve, What: "Resolving a member event", KeyName: "event"})
		})
	})
	queueworker.RunWorkers(ctx, workers, c.flushQueue, func(ctx context.Context) {
		queueworker.Run(ctx, c.flushQueue, queueworker.Handlers[eventKey]{Sync: c.flush, What: "Writing a member event at the federation", KeyName: "event"})
	})
	wg.Wait()
	return nil
}

// resolve finds the federated object a member event is about and adds the
// event to the federation event it becomes.
func (c *Controller) resolve(ctx context.Context, key pendingKey) error {
	c.mu.Lock()
	ev := c.pending[key]
	c.mu.Unlock()
	if ev == nil {
		return nil
	}
	done := func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.pending[key] == ev {
			delete(c.pending, key)
		}
	}
	if !c.members.Usable(key.Cluster) {
		done()
		return nil
	}
	copyOf, err := c.resolver.resolve(ctx, key.Cluster, ev.Namespace, ev.Involved)
	if errors.Is(err, errNotOurs) {
		if !c.members.CachesSynced(key.Cluster) {
			return waitError{wait: time.Second, what: fmt.Sprintf("cluster %s: the caches to find the copy %s in namespace %s belongs to", key.Cluster, ev.Involved, ev.Namespace)}
		}
		c.mirror.notOurs(key.Cluster, ev)
		done()
		return nil
	}
	if err != nil {
		// The resolver's errors name the cluster.
		return c.retry(key, done, fmt.Errorf("member event about %s in namespace %s: %w", ev.Involved, ev.Namespace, err))
	}
	uid, err := c.federatedUID(ctx, copyOf)
	if err != nil {
		return c.retry(key, done, fmt.Errorf("cluster %s: member event about %s in namespace %s: %w", key.Cluster, ev.Involved, ev.Namespace, err))
	}
	if uid == "" {
		// No such federated object (any more): the copy goes with it.
		done()
		return nil
	}
	fed := corev1.ObjectReference{APIVersion: copyOf.APIVersion, Kind: copyOf.Kind, Namespace: copyOf.Namespace, Name: copyOf.Name, UID: uid}
	eventKey, delay, changed := c.mirror.observe(fed, key.Cluster, ev)
	done()
	if changed {
		c.flushQueue.AddAfter(eventKey, delay)
	}
	return nil
}

// retry returns err for the queue to retry the member event, but past
// maxRetries failures (a wait for a budget is none) leaves it (done): a
// later change of it starts again.
func (c *Controller) retry(key pendingKey, done func(), err error) error {
	var wait waitError
	if !errors.As(err, &wait) && c.resolveQueue.NumRequeues(key) >= maxRetries {
		done()
		return nil
	}
	return err
}

// federatedUID is the UID of the federated object of a copy, "" when
// there is none or it is not the one the copy records.
func (c *Controller) federatedUID(ctx context.Context, copyOf copyRef) (types.UID, error) {
	uid, err := c.fedObjects.uid(ctx, copyOf.Resource, copyOf.Namespace, copyOf.Name)
	if err != nil || copyOf.ObjectUID == "" || uid == copyOf.ObjectUID {
		return uid, err
	}
	// Remembered from before the object was made again?
	c.fedObjects.forget(copyOf.Resource, copyOf.Namespace, copyOf.Name)
	if uid, err = c.fedObjects.uid(ctx, copyOf.Resource, copyOf.Namespace, copyOf.Name); err != nil || uid != copyOf.ObjectUID {
		return "", err
	}
	return uid, nil
}

// flush writes one federation event when its budgets allow.
func (c *Controller) flush(ctx context.Context, key eventKey) error {
	ev, create, wait, ok := c.mirror.take(key)
	if !ok {
		return nil
	}
	if wait > 0 {
		return waitError{wait: wait, what: fmt.Sprintf("the write budget of event %s/%s", key.Namespace, key.Name)}
	}
	count, err := c.writer.write(ctx, &ev, create)
	if err != nil && c.flushQueue.NumRequeues(key) >= maxRetries {
		// Left until the members count more of it.
		return nil
	}
	if err != nil {
		return err
	}
	if again, ok := c.mirror.written(key, count); ok {
		c.flushQueue.AddAfter(key, again)
	}
	return nil
}
