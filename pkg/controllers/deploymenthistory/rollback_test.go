package deploymenthistory

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

func TestRollbackTarget(t *testing.T) {
	ctx := context.Background()
	// Revisions: a=4 (history 1), b=2, c=3.
	history := historyAfter(t, "a", "b", "c", "a")
	for _, tt := range []struct {
		name       string
		asked      int64
		wantRS     *appsv1.ReplicaSet
		wantTarget int64
	}{
		{"0 is the previous revision", 0, history[2], 3},
		{"an existing revision", 2, history[1], 2},
		{"the current one", 4, history[0], 4},
		{"a revision that was reused is gone", 1, nil, 1},
		{"unknown", 9, nil, 9},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rs, revision := rollbackTarget(ctx, tt.asked, history)
			assert.Equal(t, tt.wantRS, rs)
			assert.Equal(t, tt.wantTarget, revision)
		})
	}
	rs, revision := rollbackTarget(ctx, 0, history[:1])
	assert.Nil(t, rs, "no previous revision")
	assert.Zero(t, revision)
}

func TestRollback(t *testing.T) {
	ctx := context.Background()
	history := historyAfter(t, "a", "b")
	asking := func(revision string) *appsv1.Deployment {
		d := deployment("b")
		d.Annotations[appsv1.DeprecatedRollbackTo] = revision
		d.Annotations[federationv1beta1.ReplicaPlanAnnotation] = `{"replicas":{"c1":3}}`
		d.Annotations["kubernetes.io/change-cause"] = "image b"
		return d
	}

	d := asking("0")
	out, ev := rollback(ctx, d, history)
	assert.Equal(t, event{corev1.EventTypeNormal, ReasonRollbackDone, `Rolled back deployment "web" to revision 1`}, ev)
	assert.Equal(t, "a", out.Spec.Template.Spec.Containers[0].Image)
	assert.Equal(t, map[string]string{"app": "web"}, out.Spec.Template.Labels, "without the pod-template-hash")
	assert.NotContains(t, out.Annotations, appsv1.DeprecatedRollbackTo, "the request is cleared in the same update")
	assert.Equal(t, "image a", out.Annotations["kubernetes.io/change-cause"], "the revision's annotations come back")
	assert.Equal(t, `{"replicas":{"c1":3}}`, out.Annotations[federationv1beta1.ReplicaPlanAnnotation], "the present plan stays")
	assert.Equal(t, "b", d.Spec.Template.Spec.Containers[0].Image, "the cached object is not modified")
	assert.Contains(t, d.Annotations, appsv1.DeprecatedRollbackTo)

	out, ev = rollback(ctx, asking("1"), history)
	assert.Equal(t, ReasonRollbackDone, ev.reason)
	assert.Equal(t, "a", out.Spec.Template.Spec.Containers[0].Image)

	for _, tt := range []struct {
		asked, reason, message string
	}{
		{"7", ReasonRollbackRevisionNotFound, "Unable to find the revision to rollback to (revision 7)."},
		{"2", ReasonRollbackTemplateUnchanged, `The rollback revision contains the same template as current deployment "web"`},
		{"x", ReasonRollbackRevisionNotFound, `Annotation deprecated.deployment.rollback.to: "x" is not a revision (a number, 0 for the previous one)`},
		{"-1", ReasonRollbackRevisionNotFound, `Annotation deprecated.deployment.rollback.to: "-1" is not a revision (a number, 0 for the previous one)`},
	} {
		t.Run("revision "+tt.asked, func(t *testing.T) {
			out, ev := rollback(ctx, asking(tt.asked), history)
			assert.Equal(t, event{corev1.EventTypeWarning, tt.reason, tt.message}, ev)
			assert.NotContains(t, out.Annotations, appsv1.DeprecatedRollbackTo, "given up: the request is cleared")
			assert.Equal(t, "b", out.Spec.Template.Spec.Containers[0].Image, "the template stays")
		})
	}

	out, ev = rollback(ctx, asking("0"), history[1:])
	require.Equal(t, ReasonRollbackRevisionNotFound, ev.reason)
	assert.Equal(t, "Unable to find last revision.", ev.message)
	assert.NotContains(t, out.Annotations, appsv1.DeprecatedRollbackTo)
}
