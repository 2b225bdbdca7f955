package sync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	stdsync "sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/federation-v1/federation/pkg/membercluster"
)

// Finalizers the apiserver adds for a delete's propagation policy. The
// federation runs no garbage collector: the sync controllers honour and
// remove them.
const (
	orphanFinalizer     = metav1.FinalizerOrphanDependents
	foregroundFinalizer = metav1.FinalizerDeleteDependents
)

// Orphaned reports whether the federated object was deleted with
// propagationPolicy Orphan (or orphanDependents): its member copies stay.
func Orphaned(fed *unstructured.Unstructured) bool {
	return slices.Contains(fed.GetFinalizers(), orphanFinalizer)
}

// delete handles a federated object being deleted: it deletes or orphans
// the member copies, then lets the object go.
func (c *Controller) delete(ctx context.Context, fed *unstructured.Unstructured) error {
	fins := fed.GetFinalizers()
	if !slices.Contains(fins, Finalizer) && !slices.Contains(fins, orphanFinalizer) && !slices.Contains(fins, foregroundFinalizer) {
		return nil
	}
	orphan := Orphaned(fed)
	ns, name := fed.GetNamespace(), fed.GetName()
	if c.dropCopies(key(ns, name)) {
		// A member write of the object is under way: the copy it leaves
		// must be seen, so look again once it is done.
		c.queue.AddAfter(key(ns, name), staleRetry)
		return nil
	}
	if rv, ok := c.released.Load(key(ns, name)); ok && rv == fed.GetResourceVersion() {
		// Already let go; the cache has not seen it leave yet.
		return nil
	}
	what := fmt.Sprintf("%s %s", c.adapter.Kind, key(ns, name))
	usable := map[string]bool{}
	var (
		mu      stdsync.Mutex
		wg      stdsync.WaitGroup
		errs    []error
		deleted []copyEvent
	)
	for _, cl := range c.members.Clusters() {
		usable[cl.Name] = true
		if !c.members.Synced(cl.Name, c.adapter.Resource) {
			// Its copies are not known yet: the cache's events bring the
			// object back, and the wait below bounds it.
			delete(usable, cl.Name)
			continue
		}
		cur, ok := c.members.Get(cl.Name, c.adapter.Resource, ns, name)
		if !ok && c.appliedTo(cl.Name+"/"+key(ns, name)) {
			// Written by us but not in the cache yet: act on it anyway.
			cur, ok = &unstructured.Unstructured{Object: map[string]any{}}, true
			cur.SetNamespace(ns)
			cur.SetName(name)
		}
		if !ok {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.releaseCopy(ctx, cl.Name, fed, cur, orphan)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, err)
			case !orphan:
				deleted = append(deleted, copyEvent{reason: ReasonDelete, verb: "Deleted", cluster: cl.Name})
			}
		}()
	}
	wg.Wait()
	c.recordCopies(fed, deleted)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if !orphan {
		if wait, err := c.waitForUnusable(fed, usable, what); err != nil || wait > 0 {
			if wait > 0 {
				c.queue.AddAfter(key(ns, name), wait)
			}
			return err
		}
	}
	rv := fed.GetResourceVersion()
	fed.SetFinalizers(slices.DeleteFunc(fins, func(f string) bool {
		return f == Finalizer || f == orphanFinalizer || f == foregroundFinalizer
	}))
	if _, err := c.resource(ns).Update(ctx, fed, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing finalizers of %s: %w", what, err)
	}
	c.released.Store(key(ns, name), rv)
	return nil
}

// releaseCopy deletes a member copy, or for an orphaning delete removes our
// label and hash from it so that it becomes the member's own. The deletion
// tells of the copies deleted in one event.
func (c *Controller) releaseCopy(ctx context.Context, cluster string, fed, cur *unstructured.Unstructured, orphan bool) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.MemberTimeout)
	defer cancel()
	client, err := c.members.Client(cluster)
	if err != nil {
		return err
	}
	ns, name := cur.GetNamespace(), cur.GetName()
	what := fmt.Sprintf("%s %s", c.adapter.Kind, key(ns, name))
	res := client.Resource(c.adapter.Resource).Namespace(ns)
	c.forgetApplied(cluster + "/" + key(ns, name))
	if orphan {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
			"labels":      map[string]any{membercluster.FederationLabel: nil},
			"annotations": map[string]any{HashAnnotation: nil},
		}})
		_, err := res.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
		c.countWrite(cluster, "patch", err)
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("orphaning %s in cluster %s: %w", what, cluster, err)
		}
		return nil
	}
	err = res.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)})
	c.countWrite(cluster, "delete", err)
	if err != nil && !apierrors.IsNotFound(err) {
		c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonDeleteFailed, "Deleting %s in cluster %s failed: %v", what, cluster, err)
		return fmt.Errorf("deleting %s in cluster %s: %w", what, cluster, err)
	}
	return nil
}

// waitForUnusable returns how much longer the deletion should wait for
// selected clusters that are not usable now; once DeletionWait has passed
// since the deletion it gives up on them with an event naming each.
func (c *Controller) waitForUnusable(fed *unstructured.Unstructured, usable map[string]bool, what string) (time.Duration, error) {
	all, err := c.members.AllClusters()
	if err != nil {
		return 0, err
	}
	var pending []string
	for _, cl := range all {
		if !usable[cl.Name] && Selected(fed.GetAnnotations(), cl) {
			pending = append(pending, cl.Name)
		}
	}
	if len(pending) == 0 {
		return 0, nil
	}
	left := time.Until(fed.GetDeletionTimestamp().Add(c.opts.DeletionWait))
	if left > 0 {
		return min(left, 5*time.Second), nil
	}
	slices.Sort(pending)
	for _, cl := range pending {
		c.recorder.Eventf(fed, corev1.EventTypeWarning, ReasonDeleteFailed,
			"Gave up deleting %s in cluster %s after %s: the cluster is not Ready; delete it there by hand", what, cl, c.opts.DeletionWait)
	}
	return 0, nil
}
