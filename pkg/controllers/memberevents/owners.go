package memberevents

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/ownership"
)

// Budgets of owner resolution.
const (
	// maxOwnerDepth bounds the walk up controller references: Pod →
	// ReplicaSet → Deployment and Pod → Job → CronJob are two steps.
	maxOwnerDepth = 3
	// ownerCacheSize bounds the controller references remembered by UID
	// (every member together).
	ownerCacheSize = 4096
	// ownerGetsPerSecond and ownerGetsBurst bound the GETs to one member
	// for objects its caches do not hold.
	ownerGetsPerSecond = 5
	ownerGetsBurst     = 20
)

// intermediates are the kinds a copy makes that own further objects or
// are the subject of events, which the federation does not label and so
// reads from the member (GET) to follow their controller reference. Every
// other kind is either a copy (found in the caches by UID) or not ours.
var intermediates = map[schema.GroupKind]schema.GroupVersionResource{
	{Kind: "Pod"}:                                      {Version: "v1", Resource: "pods"},
	{Kind: "PersistentVolumeClaim"}:                    {Version: "v1", Resource: "persistentvolumeclaims"},
	{Group: "apps", Kind: "ReplicaSet"}:                {Group: "apps", Version: "v1", Resource: "replicasets"},
	{Group: "batch", Kind: "Job"}:                      {Group: "batch", Version: "v1", Resource: "jobs"},
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}: {Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"},
}

// errNotOurs: the event is about nothing the federation made.
var errNotOurs = errors.New("not about a copy of this federation")

// copyRef is the federation copy an event is about, or the copy that owns
// what it is about.
type copyRef struct {
	Resource         schema.GroupVersionResource
	APIVersion, Kind string
	Namespace, Name  string
	// ObjectUID is the federated object's UID the copy records (empty
	// when it does not).
	ObjectUID types.UID
}

// ownerMembers is what owner resolution needs of the member clusters.
type ownerMembers interface {
	ByUID(cluster string, uid types.UID) (schema.GroupVersionResource, metav1.Object, bool)
	GetMetadata(ctx context.Context, cluster string, gvr schema.GroupVersionResource, namespace, name string) (*metav1.PartialObjectMetadata, error)
}

// resolver finds the copy an event's object is or belongs to.
type resolver struct {
	members       ownerMembers
	federation    string
	federationUID string
	timeout       time.Duration

	mu sync.Mutex
	// owners are, by cluster/UID, the controller reference of an object
	// read from a member (nil: it has none, or is gone).
	owners *lru.Cache
	// gets are the GET budgets, by cluster.
	gets map[string]*rate.Limiter
}

func newResolver(members ownerMembers, federation, federationUID string, timeout time.Duration) *resolver {
	return &resolver{members: members, federation: federation, federationUID: federationUID, timeout: timeout,
		owners: lru.New(ownerCacheSize), gets: map[string]*rate.Limiter{}}
}

// resolve walks from the involved object up its controller references to
// a copy of this federation, in namespace of cluster: errNotOurs when
// there is none, a waitError when the member's GET budget is spent.
func (r *resolver) resolve(ctx context.Context, cluster, namespace string, involved objectRef) (copyRef, error) {
	cur := involved
	for range maxOwnerDepth + 1 {
		if cur.UID == "" {
			return copyRef{}, errNotOurs
		}
		obj, gvr, err := r.object(ctx, cluster, namespace, cur)
		if err != nil {
			return copyRef{}, err
		}
		if obj == nil {
			return copyRef{}, errNotOurs
		}
		if ownership.OurCopy(obj, r.federation, r.federationUID) {
			return copyRef{Resource: gvr, APIVersion: cur.APIVersion, Kind: cur.Kind, Namespace: namespace, Name: obj.GetName(),
				ObjectUID: types.UID(obj.GetAnnotations()[federationv1beta1.ObjectUIDAnnotation])}, nil
		}
		owner := metav1.GetControllerOf(obj)
		if owner == nil {
			return copyRef{}, errNotOurs
		}
		cur = objectRef{APIVersion: owner.APIVersion, Kind: owner.Kind, Name: owner.Name, UID: owner.UID}
	}
	return copyRef{}, errNotOurs
}

// object returns the metadata of ref: from the member caches when they
// hold it (copies, and the labelled objects copies make), else from what
// was read before, else read from the member if it is of a kind copies
// make; nil when it is none of these or gone.
func (r *resolver) object(ctx context.Context, cluster, namespace string, ref objectRef) (metav1.Object, schema.GroupVersionResource, error) {
	if gvr, obj, ok := r.members.ByUID(cluster, ref.UID); ok {
		if obj.GetNamespace() != namespace {
			return nil, gvr, nil
		}
		return obj, gvr, nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, schema.GroupVersionResource{}, nil
	}
	gvr, known := intermediates[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}]
	if !known {
		return nil, gvr, nil
	}
	key := cluster + "/" + string(ref.UID)
	r.mu.Lock()
	cached, ok := r.owners.Get(key)
	r.mu.Unlock()
	if ok {
		o, _ := cached.(*ownerLink)
		if o == nil {
			return nil, gvr, nil
		}
		return o.asObject(namespace, ref), gvr, nil
	}
	if wait := r.spend(cluster); wait > 0 {
		return nil, gvr, waitError{wait: wait, what: fmt.Sprintf("cluster %s: the budget of reads to find the owner of %s in namespace %s", cluster, ref, namespace)}
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	ownerGets.WithLabelValues(cluster).Inc()
	meta, err := r.members.GetMetadata(ctx, cluster, gvr, namespace, ref.Name)
	if apierrors.IsNotFound(err) || err == nil && meta.UID != ref.UID {
		// Gone, or another object of that name now.
		r.remember(key, nil)
		return nil, gvr, nil
	}
	if err != nil {
		return nil, gvr, fmt.Errorf("cluster %s: finding the owner of %s in namespace %s: %w", cluster, ref, namespace, err)
	}
	var link *ownerLink
	if ownership.OurCopy(meta, r.federation, r.federationUID) {
		return meta, gvr, nil
	}
	if c := metav1.GetControllerOf(meta); c != nil {
		link = &ownerLink{owner: *c}
	}
	r.remember(key, link)
	if link == nil {
		return nil, gvr, nil
	}
	return meta, gvr, nil
}

// ownerLink is what is remembered of an object read from a member: its
// controller reference.
type ownerLink struct {
	owner metav1.OwnerReference
}

// asObject rebuilds the object's metadata from what was remembered.
func (o *ownerLink) asObject(namespace string, ref objectRef) metav1.Object {
	controller := true
	owner := o.owner
	owner.Controller = &controller
	return &metav1.ObjectMeta{Namespace: namespace, Name: ref.Name, UID: ref.UID, OwnerReferences: []metav1.OwnerReference{owner}}
}

func (r *resolver) remember(key string, link *ownerLink) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if link == nil {
		r.owners.Add(key, (*ownerLink)(nil))
		return
	}
	r.owners.Add(key, link)
}

// spend takes one GET from a member's budget; it returns how long to
// wait when there is none.
func (r *resolver) spend(cluster string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.gets[cluster]
	if l == nil {
		l = rate.NewLimiter(ownerGetsPerSecond, ownerGetsBurst)
		r.gets[cluster] = l
	}
	res := l.Reserve()
	if d := res.Delay(); d > 0 {
		res.Cancel()
		return d
	}
	return 0
}

// waitError says that work must wait for a budget: it is retried after
// the wait, not with the queue's backoff (queueworker.RetryAfter).
type waitError struct {
	wait time.Duration
	what string
}

func (e waitError) Error() string             { return fmt.Sprintf("%s is spent: waiting %s", e.what, e.wait) }
func (e waitError) RetryAfter() time.Duration { return e.wait }
