package deploymenthistory

import (
	"context"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	deploymentutil "k8s.io/kubernetes/pkg/controller/deployment/util"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// Event reasons of a rollback, Kubernetes' own.
const (
	ReasonRollbackDone              = deploymentutil.RollbackDone
	ReasonRollbackRevisionNotFound  = deploymentutil.RollbackRevisionNotFound
	ReasonRollbackTemplateUnchanged = deploymentutil.RollbackTemplateUnchanged
)

// presentAnnotations are written by the federation's controllers and say
// how the Deployment runs now (its replica plan, the clusters whose HPA
// owns its replicas): a rollback keeps them rather than taking the old
// revision's copies.
var presentAnnotations = []string{federationv1beta1.ReplicaPlanAnnotation, federationv1beta1.HPATargetClustersAnnotation}

// event is an event to record on the Deployment once it is written.
type event struct {
	eventType, reason, message string
}

// rollbackRequested reports whether d carries the rollback subresource's
// request (the deprecated.deployment.rollback.to annotation).
func rollbackRequested(d *appsv1.Deployment) bool {
	_, ok := d.Annotations[appsv1.DeprecatedRollbackTo]
	return ok
}

// rollbackTarget returns the ReplicaSet of revision among all and the
// revision; revision 0 is the previous one (the second highest). nil when
// there is no such revision.
func rollbackTarget(ctx context.Context, revision int64, all []*appsv1.ReplicaSet) (*appsv1.ReplicaSet, int64) {
	logger := klog.FromContext(ctx)
	if revision == 0 {
		if revision = deploymentutil.LastRevision(logger, all); revision == 0 {
			return nil, 0
		}
	}
	for _, rs := range all {
		if v, err := deploymentutil.Revision(rs); err == nil && v == revision {
			return rs, revision
		}
	}
	return nil, revision
}

// rollback performs the rollback d asks for as Kubernetes' deployment
// controller does (rollback.go): the template and annotations of the
// revision's ReplicaSet are copied to the Deployment, and the request is
// cleared in the same update. It returns the Deployment to write and the
// event to record once it is written.
func rollback(ctx context.Context, d *appsv1.Deployment, all []*appsv1.ReplicaSet) (*appsv1.Deployment, event) {
	out := d.DeepCopy()
	asked := out.Annotations[appsv1.DeprecatedRollbackTo]
	delete(out.Annotations, appsv1.DeprecatedRollbackTo)
	revision, err := strconv.ParseInt(asked, 10, 64)
	if err != nil || revision < 0 {
		return out, event{corev1.EventTypeWarning, ReasonRollbackRevisionNotFound,
			fmt.Sprintf("Annotation %s: %q is not a revision (a number, 0 for the previous one)", appsv1.DeprecatedRollbackTo, asked)}
	}
	rs, revision := rollbackTarget(ctx, revision, all)
	if rs == nil {
		if revision == 0 {
			return out, event{corev1.EventTypeWarning, ReasonRollbackRevisionNotFound, "Unable to find last revision."}
		}
		return out, event{corev1.EventTypeWarning, ReasonRollbackRevisionNotFound,
			fmt.Sprintf("Unable to find the revision to rollback to (revision %d).", revision)}
	}
	if deploymentutil.EqualIgnoreHash(&out.Spec.Template, &rs.Spec.Template) {
		return out, event{corev1.EventTypeWarning, ReasonRollbackTemplateUnchanged,
			fmt.Sprintf("The rollback revision contains the same template as current deployment %q", d.Name)}
	}
	deploymentutil.SetFromReplicaSetTemplate(out, *rs.Spec.Template.DeepCopy())
	deploymentutil.SetDeploymentAnnotationsTo(out, rs)
	for _, a := range presentAnnotations {
		if v, ok := d.Annotations[a]; ok {
			out.Annotations[a] = v
		} else {
			delete(out.Annotations, a)
		}
	}
	delete(out.Annotations, appsv1.DeprecatedRollbackTo)
	return out, event{corev1.EventTypeNormal, ReasonRollbackDone, fmt.Sprintf("Rolled back deployment %q to revision %d", d.Name, revision)}
}
