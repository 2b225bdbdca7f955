package deploymenthistory

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	deploymentutil "k8s.io/kubernetes/pkg/controller/deployment/util"
)

// ReasonHistoryNameTaken is the event reason when the name of a revision's
// ReplicaSet is held by a ReplicaSet that is not the Deployment's.
const ReasonHistoryNameTaken = "RevisionHistoryNameTaken"

// sync brings the revision history of the Deployment key in line with it.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	named, err := c.historyNamed(namespace, name)
	if err != nil {
		return err
	}
	d, err := c.deployments.Deployments(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return c.deleteHistory(ctx, named, name, "")
	}
	if err != nil {
		return err
	}
	// The history of an earlier Deployment of this name goes with it.
	if err := c.deleteHistory(ctx, named, name, d.UID); err != nil {
		return err
	}
	if d.DeletionTimestamp != nil {
		return nil
	}
	r := revisionsOf(ctx, d, historyOf(d, named))
	if d.Spec.Paused && r.current == nil {
		// As in Kubernetes, the template of a paused Deployment gets its
		// revision once the Deployment is resumed.
		return nil
	}
	current, err := c.writeCurrent(ctx, d, r)
	if current == nil || err != nil {
		return err
	}
	r.current = current
	if rollbackRequested(d) && !d.Spec.Paused { // a rollback waits for a resume, as in Kubernetes
		// The update brings the Deployment back, with its new template.
		out, ev := rollback(ctx, d, append(append([]*appsv1.ReplicaSet(nil), r.old...), current))
		if _, err := c.client.AppsV1().Deployments(namespace).Update(ctx, out, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("rolling back deployment %s: %w", key, err)
		}
		c.recorder.Event(d, ev.eventType, ev.reason, ev.message)
		return nil
	}
	if err := c.writeRevision(ctx, d, current); err != nil {
		return err
	}
	for i, rs := range r.old {
		if down, changed := scaledDown(rs); changed {
			if r.old[i], err = c.client.AppsV1().ReplicaSets(namespace).Update(ctx, down, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("setting replicas of old revision %s of deployment %s to 0: %w", rs.Name, key, err)
			}
		}
	}
	if err := c.writeStatuses(ctx, d, r); err != nil {
		return err
	}
	for _, rs := range beyondLimit(d, r.old) {
		if err := c.delete(ctx, rs); err != nil {
			return fmt.Errorf("deleting revision %s of deployment %s beyond its revisionHistoryLimit: %w", rs.Name, key, err)
		}
	}
	return nil
}

// writeCurrent creates or updates the ReplicaSet of d's current template
// and returns it; nil (with an event) when its name is taken.
func (c *Controller) writeCurrent(ctx context.Context, d *appsv1.Deployment, r revisions) (*appsv1.ReplicaSet, error) {
	rsClient := c.client.AppsV1().ReplicaSets(d.Namespace)
	if r.current != nil {
		rs, changed := syncCurrent(ctx, d, r)
		if !changed {
			return r.current, nil
		}
		updated, err := rsClient.Update(ctx, rs, metav1.UpdateOptions{})
		if err != nil {
			return nil, fmt.Errorf("updating revision %s of deployment %s/%s: %w", rs.Name, d.Namespace, d.Name, err)
		}
		return updated, nil
	}
	rs := newReplicaSet(ctx, d, r.newRevision)
	created, err := rsClient.Create(ctx, rs, metav1.CreateOptions{})
	if err == nil {
		klog.FromContext(ctx).V(2).Info("New revision", "deployment", klog.KObj(d), "replicaSet", klog.KObj(created),
			"revision", created.Annotations[deploymentutil.RevisionAnnotation])
		return created, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating revision %s of deployment %s/%s: %w", rs.Name, d.Namespace, d.Name, err)
	}
	// Our cache may be behind; or the name is someone else's.
	existing, err := rsClient.Get(ctx, rs.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading replicaset %s/%s, the name of a revision of deployment %s: %w", d.Namespace, rs.Name, d.Name, err)
	}
	ref := historyOwner(existing)
	switch {
	case ref != nil && ref.UID == d.UID && deploymentutil.EqualIgnoreHash(&d.Spec.Template, &existing.Spec.Template):
		return existing, nil
	case ref != nil && ref.Name == d.Name:
		return nil, fmt.Errorf("replicaset %s/%s is the history of an earlier deployment %s, not yet deleted", d.Namespace, rs.Name, d.Name)
	}
	c.recorder.Eventf(d, corev1.EventTypeWarning, ReasonHistoryNameTaken,
		"ReplicaSet %s exists and is not this Deployment's: the revision history is not kept until it is renamed or deleted", rs.Name)
	return nil, nil
}

// writeRevision sets d's revision annotation to its current ReplicaSet's,
// as Kubernetes does: through the status subresource, which takes
// annotations and, unlike the Deployment itself, does not count a change of
// them as a new generation (members would have to observe it before
// rollout status is satisfied). The annotation never travels to members
// (federatedtypes prunes it).
func (c *Controller) writeRevision(ctx context.Context, d *appsv1.Deployment, current *appsv1.ReplicaSet) error {
	revision := current.Annotations[deploymentutil.RevisionAnnotation]
	if revision == "" || d.Annotations[deploymentutil.RevisionAnnotation] == revision {
		return nil
	}
	out := d.DeepCopy()
	deploymentutil.SetDeploymentRevision(out, revision)
	if _, err := c.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("setting revision %s on deployment %s/%s: %w", revision, d.Namespace, d.Name, err)
	}
	return nil
}

// writeStatuses writes the history ReplicaSets' status where it changed.
func (c *Controller) writeStatuses(ctx context.Context, d *appsv1.Deployment, r revisions) error {
	want := statuses(d, r)
	for _, rs := range append([]*appsv1.ReplicaSet{r.current}, r.old...) {
		want, ok := want[rs.Name]
		if !ok || !statusChanged(rs, want) {
			continue
		}
		out := rs.DeepCopy()
		out.Status.Replicas, out.Status.FullyLabeledReplicas = want.Replicas, want.FullyLabeledReplicas
		out.Status.ReadyReplicas, out.Status.AvailableReplicas = want.ReadyReplicas, want.AvailableReplicas
		out.Status.ObservedGeneration = want.ObservedGeneration
		if _, err := c.client.AppsV1().ReplicaSets(rs.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("writing the status of revision %s of deployment %s/%s: %w", rs.Name, d.Namespace, d.Name, err)
		}
	}
	return nil
}

// deleteHistory deletes the history ReplicaSets of a Deployment named name
// whose UID is not uid: the federation runs no garbage collector, so the
// history of a deleted Deployment is deleted here.
func (c *Controller) deleteHistory(ctx context.Context, all []*appsv1.ReplicaSet, name string, uid types.UID) error {
	for _, rs := range all {
		ref := historyOwner(rs)
		if ref == nil || ref.Name != name || ref.UID == uid || rs.DeletionTimestamp != nil {
			continue
		}
		if err := c.delete(ctx, rs); err != nil {
			return fmt.Errorf("deleting revision %s of deleted deployment %s/%s: %w", rs.Name, rs.Namespace, name, err)
		}
		klog.FromContext(ctx).V(2).Info("Deleted the revision of a deleted deployment", "replicaSet", klog.KObj(rs))
	}
	return nil
}

// historyNamed returns the history ReplicaSets of the Deployments named
// name in namespace, this one's and those of any earlier one of that name.
func (c *Controller) historyNamed(namespace, name string) ([]*appsv1.ReplicaSet, error) {
	objs, err := c.history.ByIndex(historyIndex, historyKey(namespace, name))
	if err != nil {
		return nil, err
	}
	out := make([]*appsv1.ReplicaSet, 0, len(objs))
	for _, obj := range objs {
		if rs, ok := obj.(*appsv1.ReplicaSet); ok {
			out = append(out, rs)
		}
	}
	return out, nil
}

// delete deletes rs, if it is still the one we saw.
func (c *Controller) delete(ctx context.Context, rs *appsv1.ReplicaSet) error {
	err := c.client.AppsV1().ReplicaSets(rs.Namespace).Delete(ctx, rs.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &rs.UID}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}
