package sync

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/membercluster"
)

// Finalizer holds a federated object until its member copies are handled.
// The federation apiserver's FederationFinalizer admission plugin usually
// sets it at creation; Sync adds it when it is missing.
const Finalizer = federationv1beta1.FinalizerDeleteFromUnderlyingClusters

// Event reasons on federated objects.
const (
	ReasonCreate       = "CreateInCluster"
	ReasonUpdate       = "UpdateInCluster"
	ReasonDelete       = "DeleteInCluster"
	ReasonCreateFailed = "CreateInClusterFailed"
	ReasonUpdateFailed = "UpdateInClusterFailed"
	ReasonDeleteFailed = "DeleteInClusterFailed"
	ReasonAdopt        = "AdoptInCluster"
	ReasonBadSelector  = "InvalidClusterSelector"
)

// ignored: the federation's own namespace never travels.
func ignored(a *Adapter, key string) bool {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	return NeverPropagated(a.Resource.GroupResource(), ns, name)
}

// NeverPropagated reports whether the object ns/name of resource gr is the
// federation's own: its namespace, and everything in it (cluster credentials).
func NeverPropagated(gr schema.GroupResource, ns, name string) bool {
	return ns == membercluster.SecretNamespace || (gr == membercluster.NamespacesResource.GroupResource() && name == membercluster.SecretNamespace)
}

// staleRetry is how soon an object is looked at again when our cache of it
// was behind the federation apiserver.
const staleRetry = 250 * time.Millisecond

// Sync reconciles the federated object with key in every member cluster.
func (c *Controller) Sync(ctx context.Context, key string) error {
	if ignored(c.adapter, key) {
		return nil
	}
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.get(ns, name)
	if apierrors.IsNotFound(err) {
		c.forgetChange(key)
		c.released.Delete(key)
		c.dropCopies(key)
		return nil
	}
	if err != nil {
		return err
	}
	fed := cached.DeepCopy()
	if fed.GetDeletionTimestamp() != nil {
		if c.adapter.DividesHPA {
			if err := c.releaseTarget(ctx, fed); err != nil {
				return err
			}
		}
		return c.delete(ctx, fed)
	}
	if !slices.Contains(fed.GetFinalizers(), Finalizer) {
		fed.SetFinalizers(append(fed.GetFinalizers(), Finalizer))
		if fed, err = c.resource(ns).Update(ctx, fed, metav1.UpdateOptions{}); err != nil {
			if apierrors.IsConflict(err) {
				// Our cache is behind (often: the finalizer is already
				// there): look again shortly, without the error backoff.
				c.queue.AddAfter(key, staleRetry)
				return nil
			}
			return fmt.Errorf("adding finalizer to %s %s: %w", c.adapter.Kind, key, err)
		}
	}
	clusters := c.members.Clusters()
	var hasNamespace func(string) bool
	if c.adapter.Namespaced {
		hasNamespace = func(cluster string) bool {
			_, ok := c.members.Get(cluster, membercluster.NamespacesResource, "", ns)
			return ok
		}
	}
	placed, err := Placement(fed.GetAnnotations(), clusters, hasNamespace)
	if err != nil {
		c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonBadSelector, "%s %s: %v", c.adapter.Kind, key, err)
		return nil
	}
	desired, hash, err := Desired(c.adapter, fed, c.members.Federation())
	if err != nil {
		return fmt.Errorf("%s %s: %w", c.adapter.Kind, key, err)
	}
	// Each cluster gets its own desired object when the workload is divided.
	fed, placed, desiredIn, planned, err := c.divide(ctx, fed, placed, desired, hash)
	if err != nil {
		return err
	}
	hashes := map[string]string{}
	var results []Member
	var writes []memberWrite
	for _, cl := range clusters {
		d, h, err := desiredIn(cl.Name)
		if err != nil {
			return fmt.Errorf("%s %s in cluster %s: %w", c.adapter.Kind, key, cl.Name, err)
		}
		hashes[cl.Name] = h
		// (A task still queued for the copy is replaced even so: what it
		// would write is out of date.)
		if memberCopy, ok := c.inSync(cl.Name, fed, d, h, placed[cl.Name]); ok && !c.hasTask(key, cl.Name) {
			if memberCopy != nil {
				results = append(results, Member{Cluster: cl.Name, Object: memberCopy})
			}
			continue
		}
		writes = append(writes, memberWrite{cluster: cl.Name, desired: d, hash: h, placed: placed[cl.Name]})
	}
	c.dispatch(fed, writes)
	inFlight, failures := c.copyState(key)
	if !inFlight && len(failures) == 0 {
		c.observeChange(key)
	}
	if c.adapter.Status != nil {
		// From the member caches: copies being written come back with
		// their members' watch events.
		rolled := !inFlight && len(failures) == 0 && Rolled(placed, results, hashes)
		return c.writeStatus(ctx, fed, results, rolled, inFlight, failures, planned)
	}
	return nil
}

// get returns the federated object from the cache.
func (c *Controller) get(ns, name string) (*unstructured.Unstructured, error) {
	var obj any
	var err error
	if c.adapter.Namespaced {
		obj, err = c.lister.ByNamespace(ns).Get(name)
	} else {
		obj, err = c.lister.Get(name)
	}
	if err != nil {
		return nil, err
	}
	return obj.(*unstructured.Unstructured), nil
}

// inSync reports, from the member's cache alone, that a member holds what
// it should of fed, and returns its copy (nil when it should have none).
func (c *Controller) inSync(cluster string, fed, desired *unstructured.Unstructured, hash string, placed bool) (*unstructured.Unstructured, bool) {
	cur, exists := c.members.Get(cluster, c.adapter.Resource, fed.GetNamespace(), fed.GetName())
	if !placed {
		return nil, !exists
	}
	appliedKey := cluster + "/" + key(fed.GetNamespace(), fed.GetName())
	c.mu.Lock()
	last, appliedBefore := c.applied[appliedKey]
	c.mu.Unlock()
	if !exists {
		// Our write of this very version, whose watch event has not come
		// yet: the event brings the object back.
		return nil, appliedBefore && last.unseen && last.hash == hash
	}
	if !InSync(cur, desired, hash, last.version) {
		return nil, false
	}
	if !appliedBefore {
		c.rememberApplied(appliedKey, cur, false)
	}
	return cur, true
}

// Rolled reports whether every placed cluster holds the object as last
// applied (its hash in hashes) and its controllers observed that generation.
func Rolled(placed map[string]bool, members []Member, hashes map[string]string) bool {
	current := 0
	for _, m := range members {
		if !placed[m.Cluster] || m.Object.GetAnnotations()[HashAnnotation] != hashes[m.Cluster] {
			continue
		}
		observed, _, _ := unstructured.NestedInt64(m.Object.Object, "status", "observedGeneration")
		if observed >= m.Object.GetGeneration() {
			current++
		}
	}
	return current == len(placed)
}

// syncCluster makes one member hold what it should of fed, and returns what
// it wrote (nil when nothing).
func (c *Controller) syncCluster(ctx context.Context, cluster string, fed, desired *unstructured.Unstructured, hash string, placed bool) (*copyEvent, error) {
	if _, ok := c.inSync(cluster, fed, desired, hash, placed); ok {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.MemberTimeout)
	defer cancel()
	ns, name := fed.GetNamespace(), fed.GetName()
	what := fmt.Sprintf("%s %s", c.adapter.Kind, key(ns, name))
	cur, exists := c.members.Get(cluster, c.adapter.Resource, ns, name)
	client, err := c.members.Client(cluster)
	if err != nil {
		return nil, err
	}
	res := client.Resource(c.adapter.Resource).Namespace(ns)
	appliedKey := cluster + "/" + key(ns, name)

	if !placed {
		err := res.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)})
		c.countWrite(cluster, "delete", err)
		if err != nil && !apierrors.IsNotFound(err) {
			c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonDeleteFailed, "Deleting %s in cluster %s failed: %v", what, cluster, err)
			return nil, fmt.Errorf("deleting %s in cluster %s: %w", what, cluster, err)
		}
		c.forgetApplied(appliedKey)
		return &copyEvent{reason: ReasonDelete, verb: "Deleted", suffix: ": no longer selected"}, nil
	}

	c.mu.Lock()
	lastApplied, appliedBefore := c.applied[appliedKey]
	c.mu.Unlock()
	last := lastApplied.version
	ev := &copyEvent{reason: ReasonUpdate, verb: "Updated"}
	// Changed there while what we send stayed the same (a member's HPA
	// changing replicas the federation follows is an update, not drift).
	if exists && appliedBefore && last != version(cur) && cur.GetAnnotations()[HashAnnotation] == hash {
		ev = &copyEvent{reason: ReasonUpdate, verb: "Restored", suffix: ": it was changed there"}
	}
	// Written before but not in our cache: not there yet, deleted there, or
	// our label taken off. (Never written and not in a synced cache: absent
	// or unlabelled, which the apply's answer tells apart.)
	firstWrite := !exists && !appliedBefore && c.members.Synced(cluster, c.adapter.Resource)
	if !exists && !firstWrite {
		live, err := res.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			ev = &copyEvent{reason: ReasonCreate, verb: "Created"}
			if appliedBefore {
				ev = &copyEvent{reason: ReasonCreate, verb: "Recreated", suffix: ": it was deleted there"}
			}
		case err != nil:
			c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonUpdateFailed, "Reading %s in cluster %s failed: %v", what, cluster, err)
			return nil, fmt.Errorf("reading %s in cluster %s: %w", what, cluster, err)
		case live.GetLabels()[membercluster.FederationLabel] != c.members.Federation():
			ev = &copyEvent{reason: ReasonAdopt, verb: "Adopted the existing"}
		case InSync(live, desired, hash, last):
			// Our own write, not yet in the cache.
			return nil, nil
		}
	}
	if firstWrite {
		ev = &copyEvent{reason: ReasonCreate, verb: "Created"}
	}
	start := time.Now()
	out, err := c.members.Apply(ctx, cluster, c.adapter.Resource, desired, FieldManager)
	c.countWrite(cluster, "apply", err)
	if apierrors.IsInvalid(err) && c.adapter.Replicas != nil && c.adapter.Replicas.FixedTemplate && podLabelled(desired) {
		// A Job the member already runs, not in our label-filtered cache:
		// its pod template cannot change, so it goes without our pod label
		// (and once adopted, the cache tells the next writes the same).
		bare, _, berr := withoutPodLabel(desired)
		if berr == nil {
			out, err = c.members.Apply(ctx, cluster, c.adapter.Resource, bare, FieldManager)
			c.countWrite(cluster, "apply", err)
		}
	}
	if err != nil {
		failed := ReasonUpdateFailed
		if ev.reason == ReasonCreate {
			failed = ReasonCreateFailed
		}
		c.recorder.Eventf(fed, corev1.EventTypeWarning, failed, "Applying %s in cluster %s failed: %v", what, cluster, err)
		return nil, fmt.Errorf("applying %s in cluster %s: %w", what, cluster, err)
	}
	if firstWrite && adopted(out) {
		ev = &copyEvent{reason: ReasonAdopt, verb: "Adopted the existing"}
	}
	klog.FromContext(ctx).V(2).Info("Applied to member", "cluster", cluster, "object", key(ns, name), "took", time.Since(start))
	c.rememberApplied(appliedKey, out, true)
	return ev, nil
}

func (c *Controller) resource(namespace string) dynamic.ResourceInterface {
	if c.adapter.Namespaced {
		return c.fed.Namespace(namespace)
	}
	return c.fed
}

// ourCopy is what we know of a member copy we wrote or saw in sync.
type ourCopy struct {
	// version of the copy our write left (see version).
	version string
	// resourceVersion of the copy our write left: its watch event is the
	// echo of that write.
	resourceVersion string
	// hash we applied.
	hash string
	// unseen: written by us, and no watch event of the copy has come since.
	unseen bool
}

// rememberApplied records the member copy obj as ours; written says it is
// the answer to our write, which the member's watch has yet to bring.
func (c *Controller) rememberApplied(k string, obj metav1.Object, written bool) {
	c.mu.Lock()
	c.applied[k] = ourCopy{version: version(obj), resourceVersion: obj.GetResourceVersion(), hash: obj.GetAnnotations()[HashAnnotation], unseen: written}
	c.mu.Unlock()
}

// seen notes that a member's watch brought an event of the copy of ns/name
// in cluster, and reports whether that event is only the echo of our own
// write: the member's cache holds exactly the version our last write left,
// or the copy is being written right now (its answer may come after the
// watch event; the worker checks it then: holdsOurWrite). Such an event
// needs no reconcile unless the type's status comes back from the members.
// Without this, an object propagated to N members was reconciled again on
// each of the N events, each time checking all N copies.
func (c *Controller) seen(cluster, ns, name string) (echo bool) {
	k := key(ns, name)
	c.mu.Lock()
	if a, ok := c.applied[cluster+"/"+k]; ok && a.unseen {
		a.unseen = false
		c.applied[cluster+"/"+k] = a
	}
	c.mu.Unlock()
	if c.adapter.Status != nil || c.adapter.Endpoints {
		return false
	}
	return c.holdsOurWrite(cluster, k) || c.copies.writing(cluster, k)
}

// holdsOurWrite reports whether the member's cache holds the copy of objKey
// exactly as our last write left it.
func (c *Controller) holdsOurWrite(cluster, objKey string) bool {
	c.mu.Lock()
	a, ok := c.applied[cluster+"/"+objKey]
	c.mu.Unlock()
	if !ok || a.resourceVersion == "" {
		return false
	}
	ns, name, _ := cache.SplitMetaNamespaceKey(objKey)
	cur, exists := c.members.Get(cluster, c.adapter.Resource, ns, name)
	return exists && cur.GetResourceVersion() == a.resourceVersion
}

func (c *Controller) appliedTo(k string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.applied[k]
	return ok
}

func (c *Controller) forgetApplied(k string) {
	c.mu.Lock()
	delete(c.applied, k)
	c.mu.Unlock()
}

func (c *Controller) countWrite(cluster, verb string, err error) {
	syncMetrics.writes.WithLabelValues(c.adapter.Name, cluster, verb).Inc()
	if err != nil && !apierrors.IsNotFound(err) {
		syncMetrics.errors.WithLabelValues(c.adapter.Name, cluster).Inc()
	}
}

// observeChange records the time from a federated change to its last member write.
func (c *Controller) observeChange(k string) {
	c.mu.Lock()
	at, ok := c.changedAt[k]
	delete(c.changedAt, k)
	c.mu.Unlock()
	if ok {
		syncMetrics.latency.WithLabelValues(c.adapter.Name).Observe(time.Since(at).Seconds())
	}
}

func (c *Controller) forgetChange(k string) {
	c.mu.Lock()
	delete(c.changedAt, k)
	c.mu.Unlock()
}

func key(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

func ptr[T any](v T) *T { return &v }
