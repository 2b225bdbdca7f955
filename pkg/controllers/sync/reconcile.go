package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	stdsync "sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/membercluster"
)

// Finalizer holds a federated object until its member copies are handled.
const Finalizer = "federation.kubernetes.io/delete-from-underlying-clusters"

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
	return ns == membercluster.SecretNamespace || (a.Resource == membercluster.NamespacesResource && name == membercluster.SecretNamespace)
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
	var obj any
	if c.adapter.Namespaced {
		obj, err = c.lister.ByNamespace(ns).Get(name)
	} else {
		obj, err = c.lister.Get(name)
	}
	if apierrors.IsNotFound(err) {
		c.forgetChange(key)
		c.released.Delete(key)
		return nil
	}
	if err != nil {
		return err
	}
	fed := obj.(*unstructured.Unstructured).DeepCopy()
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

	var (
		mu      stdsync.Mutex
		wg      stdsync.WaitGroup
		errs    []error
		results []Member
	)
	for _, cl := range clusters {
		d, h, err := desiredIn(cl.Name)
		if err != nil {
			return fmt.Errorf("%s %s in cluster %s: %w", c.adapter.Kind, key, cl.Name, err)
		}
		hashes[cl.Name] = h
		wg.Add(1)
		go func() {
			defer wg.Done()
			memberCopy, err := c.syncCluster(ctx, cl.Name, fed, d, h, placed[cl.Name])
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				syncMetrics.errors.WithLabelValues(c.adapter.Name, cl.Name).Inc()
			}
			if memberCopy != nil {
				results = append(results, Member{Cluster: cl.Name, Object: memberCopy})
			}
		}()
	}
	wg.Wait()
	if len(errs) == 0 {
		c.observeChange(key)
	}
	if c.adapter.Status != nil {
		rolled := len(errs) == 0 && Rolled(placed, results, hashes)
		var failures []string
		for _, err := range errs {
			failures = append(failures, err.Error())
		}
		if err := c.writeStatus(ctx, fed, results, rolled, failures, planned); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
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

// syncCluster makes one member hold what it should of fed, and returns its
// copy (nil when it has none).
func (c *Controller) syncCluster(ctx context.Context, cluster string, fed, desired *unstructured.Unstructured, hash string, placed bool) (*unstructured.Unstructured, error) {
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
		if !exists {
			return nil, nil
		}
		err := res.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)})
		c.countWrite(cluster, "delete", err)
		if err != nil && !apierrors.IsNotFound(err) {
			c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonDeleteFailed, "Deleting %s in cluster %s failed: %v", what, cluster, err)
			return nil, fmt.Errorf("deleting %s in cluster %s: %w", what, cluster, err)
		}
		c.forgetApplied(appliedKey)
		c.recorder.Eventf(fed, corev1.EventTypeNormal, ReasonDelete, "Deleted %s in cluster %s: no longer selected", what, cluster)
		return nil, nil
	}

	c.mu.Lock()
	last, appliedBefore := c.applied[appliedKey]
	c.mu.Unlock()
	if exists && InSync(cur, desired, hash, last) {
		if !appliedBefore {
			c.rememberApplied(appliedKey, cur)
		}
		return cur, nil
	}
	reason, message := ReasonUpdate, fmt.Sprintf("Updated %s in cluster %s", what, cluster)
	// Changed there while what we send stayed the same (a member's HPA
	// changing replicas the federation follows is an update, not drift).
	if exists && appliedBefore && last != version(cur) && cur.GetAnnotations()[HashAnnotation] == hash {
		message = fmt.Sprintf("Restored %s in cluster %s: it was changed there", what, cluster)
	}
	// Written before but not in our cache: not there yet, deleted there, or
	// our label taken off. (Never written and not in a synced cache: absent
	// or unlabelled, which the apply's answer tells apart.)
	firstWrite := !exists && !appliedBefore && c.members.Synced(cluster, c.adapter.Resource)
	if !exists && !firstWrite {
		live, err := res.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			reason, message = ReasonCreate, fmt.Sprintf("Created %s in cluster %s", what, cluster)
			if appliedBefore {
				message = fmt.Sprintf("Recreated %s in cluster %s: it was deleted there", what, cluster)
			}
		case err != nil:
			c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonUpdateFailed, "Reading %s in cluster %s failed: %v", what, cluster, err)
			return nil, fmt.Errorf("reading %s in cluster %s: %w", what, cluster, err)
		case live.GetLabels()[membercluster.FederationLabel] != c.members.Federation():
			reason, message = ReasonAdopt, fmt.Sprintf("Adopted the existing %s in cluster %s", what, cluster)
		case InSync(live, desired, hash, last):
			// Our own write, not yet in the cache.
			return live, nil
		}
	}
	if firstWrite {
		reason, message = ReasonCreate, fmt.Sprintf("Created %s in cluster %s", what, cluster)
	}
	start := time.Now()
	out, err := res.Apply(ctx, name, desired, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	c.countWrite(cluster, "apply", err)
	if err != nil {
		failed := ReasonUpdateFailed
		if reason == ReasonCreate {
			failed = ReasonCreateFailed
		}
		c.recorder.Eventf(fed, corev1.EventTypeWarning, failed, "Applying %s in cluster %s failed: %v", what, cluster, err)
		return nil, fmt.Errorf("applying %s in cluster %s: %w", what, cluster, err)
	}
	if firstWrite && adopted(out) {
		reason, message = ReasonAdopt, fmt.Sprintf("Adopted the existing %s in cluster %s", what, cluster)
	}
	klog.FromContext(ctx).V(2).Info("Applied to member", "cluster", cluster, "object", key(ns, name), "took", time.Since(start))
	c.rememberApplied(appliedKey, out)
	c.recorder.Event(fed, corev1.EventTypeNormal, reason, message)
	return out, nil
}

func (c *Controller) resource(namespace string) dynamic.ResourceInterface {
	if c.adapter.Namespaced {
		return c.fed.Namespace(namespace)
	}
	return c.fed
}

func (c *Controller) rememberApplied(k string, obj *unstructured.Unstructured) {
	c.mu.Lock()
	c.applied[k] = version(obj)
	c.mu.Unlock()
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
