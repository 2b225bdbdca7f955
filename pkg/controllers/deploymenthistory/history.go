package deploymenthistory

import (
	"context"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller"
	deploymentutil "k8s.io/kubernetes/pkg/controller/deployment/util"
	labelsutil "k8s.io/kubernetes/pkg/util/labels"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// deploymentKind is the kind of a history ReplicaSet's controller.
var deploymentKind = appsv1.SchemeGroupVersion.WithKind("Deployment")

// maxRevHistoryLengthInChars bounds the revision-history annotation, as
// Kubernetes' deployment controller does.
const maxRevHistoryLengthInChars = 2000

// defaultHistoryLimit is spec.revisionHistoryLimit's default in apps/v1.
const defaultHistoryLimit = 10

// historyOwner returns the controller reference of a history ReplicaSet:
// a local ReplicaSet controlled by a Deployment; nil for any other.
func historyOwner(rs *appsv1.ReplicaSet) *metav1.OwnerReference {
	if rs.Labels[federationv1beta1.LocalLabel] != "true" {
		return nil
	}
	ref := metav1.GetControllerOf(rs)
	if ref == nil || ref.Kind != deploymentKind.Kind {
		return nil
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != deploymentKind.Group {
		return nil
	}
	return ref
}

// historyIndex indexes the local ReplicaSets by namespace/name of the
// Deployment controlling them, whatever its UID: a sync reads only the
// history of its own Deployment's name, not every ReplicaSet of the
// namespace (which made each resync quadratic in Deployments).
const historyIndex = "historyOwner"

func historyIndexFunc(obj any) ([]string, error) {
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		return nil, nil
	}
	ref := historyOwner(rs)
	if ref == nil {
		return nil, nil
	}
	return []string{historyKey(rs.Namespace, ref.Name)}, nil
}

func historyKey(namespace, deployment string) string {
	return namespace + "/" + deployment
}

// historyOf returns d's history ReplicaSets among rsList (its UID controls
// them).
func historyOf(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range rsList {
		if ref := historyOwner(rs); ref != nil && ref.UID == d.UID {
			out = append(out, rs)
		}
	}
	return out
}

// replicasOf is d's spec.replicas (1 when unset, the apps/v1 default).
func replicasOf(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// newReplicaSet is the history ReplicaSet of d's current template, as
// Kubernetes' deployment controller makes a new ReplicaSet (sync.go,
// getNewReplicaSet), with revision newRevision, labelled local.
func newReplicaSet(ctx context.Context, d *appsv1.Deployment, newRevision int64) *appsv1.ReplicaSet {
	template := *d.Spec.Template.DeepCopy()
	hash := controller.ComputeHash(&template, d.Status.CollisionCount)
	template.Labels = labelsutil.CloneAndAddLabel(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
	replicas := replicasOf(d)
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name:            d.Name + "-" + hash,
			Namespace:       d.Namespace,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, deploymentKind)},
			Labels:          labelsutil.CloneAndAddLabel(template.Labels, federationv1beta1.LocalLabel, "true"),
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        &replicas,
			MinReadySeconds: d.Spec.MinReadySeconds,
			Selector:        labelsutil.CloneSelectorAndAddLabel(d.Spec.Selector, appsv1.DefaultDeploymentUniqueLabelKey, hash),
			Template:        template,
		},
	}
	deploymentutil.SetNewReplicaSetAnnotations(ctx, d, rs, strconv.FormatInt(newRevision, 10), false, maxRevHistoryLengthInChars)
	return rs
}

// revisions are d's history: the ReplicaSet of its current template (nil
// when there is none yet), the others, and the revision the current
// template gets (the highest old one + 1, as in Kubernetes).
type revisions struct {
	current     *appsv1.ReplicaSet
	old         []*appsv1.ReplicaSet
	newRevision int64
}

// revisionsOf sorts d's history ReplicaSets.
func revisionsOf(ctx context.Context, d *appsv1.Deployment, history []*appsv1.ReplicaSet) revisions {
	_, old := deploymentutil.FindOldReplicaSets(d, history)
	return revisions{
		current:     deploymentutil.FindNewReplicaSet(d, history),
		old:         old,
		newRevision: deploymentutil.MaxRevision(klog.FromContext(ctx), old) + 1,
	}
}

// syncCurrent returns the current ReplicaSet as it should be, and whether
// it changed: the Deployment's annotations copied, its revision raised
// above the old ones (revision-history keeps the revisions it had before
// when an old template comes back), its replica count and annotations.
func syncCurrent(ctx context.Context, d *appsv1.Deployment, r revisions) (*appsv1.ReplicaSet, bool) {
	rs := r.current.DeepCopy()
	changed := deploymentutil.SetNewReplicaSetAnnotations(ctx, d, rs, strconv.FormatInt(r.newRevision, 10), true, maxRevHistoryLengthInChars)
	replicas := replicasOf(d)
	if deploymentutil.SetReplicasAnnotations(rs, replicas, replicas+deploymentutil.MaxSurge(*d)) {
		changed = true
	}
	if rs.Spec.Replicas == nil || *rs.Spec.Replicas != replicas || rs.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
		rs.Spec.Replicas = &replicas
		rs.Spec.MinReadySeconds = d.Spec.MinReadySeconds
		changed = true
	}
	return rs, changed
}

// scaledDown returns an old ReplicaSet set to 0 replicas, and whether it
// was not: the Deployment runs only its current template once rolled out.
func scaledDown(rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, bool) {
	if rs.Spec.Replicas != nil && *rs.Spec.Replicas == 0 {
		return rs, false
	}
	rs = rs.DeepCopy()
	rs.Spec.Replicas = new(int32)
	return rs, true
}

// beyondLimit returns the old ReplicaSets to delete so that at most
// spec.revisionHistoryLimit stay, oldest revisions first. As in Kubernetes
// (cleanupDeployment), one that still counts replicas, has not had its spec
// observed or is being deleted stays.
func beyondLimit(d *appsv1.Deployment, old []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	limit := int32(defaultHistoryLimit)
	if d.Spec.RevisionHistoryLimit != nil {
		limit = *d.Spec.RevisionHistoryLimit
	}
	var alive []*appsv1.ReplicaSet
	for _, rs := range old {
		if rs.DeletionTimestamp == nil {
			alive = append(alive, rs)
		}
	}
	diff := len(alive) - int(limit)
	if diff <= 0 {
		return nil
	}
	sortByRevision(alive)
	var out []*appsv1.ReplicaSet
	for _, rs := range alive[:diff] {
		if rs.Status.Replicas != 0 || (rs.Spec.Replicas != nil && *rs.Spec.Replicas != 0) || rs.Generation > rs.Status.ObservedGeneration {
			continue
		}
		out = append(out, rs)
	}
	return out
}
