package deploymenthistory

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubernetes/pkg/controller"
	deploymentutil "k8s.io/kubernetes/pkg/controller/deployment/util"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// deployment is the federated Deployment web (3 replicas, 25% surge) with image.
func deployment(image string) *appsv1.Deployment {
	replicas := int32(3)
	surge := intstr.FromString("25%")
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "d-uid", Generation: 1,
			Annotations: map[string]string{"kubernetes.io/change-cause": "image " + image}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
			},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &surge}},
		},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1},
	}
}

// historyAfter returns the history the images make, one after the other,
// as the controller's pure steps make it.
func historyAfter(t *testing.T, images ...string) []*appsv1.ReplicaSet {
	t.Helper()
	ctx := context.Background()
	var history []*appsv1.ReplicaSet
	for i, image := range images {
		d := deployment(image)
		r := revisionsOf(ctx, d, history)
		if r.current == nil {
			rs := newReplicaSet(ctx, d, r.newRevision)
			rs.UID = types.UID(fmt.Sprintf("rs-%d", i))
			rs.CreationTimestamp = metav1.Unix(int64(i), 0)
			history = append(history, rs)
			continue
		}
		rs, _ := syncCurrent(ctx, d, r)
		for j := range history {
			if history[j].UID == rs.UID {
				history[j] = rs
			}
		}
	}
	return history
}

func revisionOf(t *testing.T, rs *appsv1.ReplicaSet) int64 {
	t.Helper()
	v, err := deploymentutil.Revision(rs)
	require.NoError(t, err)
	return v
}

func TestNewReplicaSetIsTheDeploymentControllers(t *testing.T) {
	d := deployment("nginx:1.25")
	rs := newReplicaSet(context.Background(), d, 1)
	hash := controller.ComputeHash(&d.Spec.Template, nil)
	assert.Equal(t, "web-"+hash, rs.Name)
	assert.Equal(t, map[string]string{"app": "web", "pod-template-hash": hash, federationv1beta1.LocalLabel: "true"}, rs.Labels)
	assert.Equal(t, map[string]string{"app": "web", "pod-template-hash": hash}, rs.Spec.Template.Labels, "the pods are not labelled local")
	assert.Equal(t, map[string]string{"app": "web", "pod-template-hash": hash}, rs.Spec.Selector.MatchLabels)
	assert.Equal(t, "nginx:1.25", rs.Spec.Template.Spec.Containers[0].Image)
	ref := metav1.GetControllerOf(rs)
	require.NotNil(t, ref)
	assert.Equal(t, metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d-uid",
		Controller: ref.Controller, BlockOwnerDeletion: ref.BlockOwnerDeletion}, *ref)
	assert.Equal(t, map[string]string{
		"deployment.kubernetes.io/revision":         "1",
		"deployment.kubernetes.io/desired-replicas": "3",
		"deployment.kubernetes.io/max-replicas":     "4", // 3 + 25% surge, rounded up
		"kubernetes.io/change-cause":                "image nginx:1.25",
	}, rs.Annotations)
	assert.EqualValues(t, 3, *rs.Spec.Replicas)
	assert.Equal(t, ref, historyOwner(rs), "it is recognised as history")

	collided := d.DeepCopy()
	one := int32(1)
	collided.Status.CollisionCount = &one
	assert.NotEqual(t, rs.Name, newReplicaSet(context.Background(), collided, 1).Name, "the collision count changes the hash")
}

func TestOnlyLocalReplicaSetsOfADeploymentAreHistory(t *testing.T) {
	rs := newReplicaSet(context.Background(), deployment("a"), 1)
	federated := rs.DeepCopy()
	delete(federated.Labels, federationv1beta1.LocalLabel)
	assert.Nil(t, historyOwner(federated), "a federated ReplicaSet is the user's")
	other := rs.DeepCopy()
	other.OwnerReferences[0].APIVersion = "example.com/v1"
	assert.Nil(t, historyOwner(other), "a Deployment of another group")
	d := deployment("a")
	d.UID = "another"
	assert.Empty(t, historyOf(d, []*appsv1.ReplicaSet{rs}), "another Deployment's")
}

func TestHistoryIsIndexedByTheNameOfItsDeployment(t *testing.T) {
	rs := newReplicaSet(context.Background(), deployment("a"), 1)
	keys, err := historyIndexFunc(rs)
	require.NoError(t, err)
	assert.Equal(t, []string{"ns/web"}, keys, "a Deployment's history is found by its name, whatever its UID")
	federated := rs.DeepCopy()
	delete(federated.Labels, federationv1beta1.LocalLabel)
	keys, err = historyIndexFunc(federated)
	require.NoError(t, err)
	assert.Empty(t, keys, "a federated ReplicaSet is nobody's history")
}

func TestRevisionsGoUpAndAnOldTemplateIsReused(t *testing.T) {
	history := historyAfter(t, "a", "b", "c")
	require.Len(t, history, 3)
	for i, rs := range history {
		assert.Equal(t, int64(i+1), revisionOf(t, rs), rs.Name)
	}
	assert.Equal(t, "image c", history[2].Annotations["kubernetes.io/change-cause"])

	// "a" comes back: its ReplicaSet is reused with revision 4, and
	// remembers it was 1.
	history = historyAfter(t, "a", "b", "c", "a")
	require.Len(t, history, 3, "no new ReplicaSet")
	assert.Equal(t, int64(4), revisionOf(t, history[0]))
	assert.Equal(t, "1", history[0].Annotations[deploymentutil.RevisionHistoryAnnotation])
	// and again, after "b" once more.
	history = historyAfter(t, "a", "b", "c", "a", "b", "a")
	assert.Equal(t, int64(6), revisionOf(t, history[0]))
	assert.Equal(t, "1,4", history[0].Annotations[deploymentutil.RevisionHistoryAnnotation])
	assert.Equal(t, int64(5), revisionOf(t, history[1]))

	r := revisionsOf(context.Background(), deployment("a"), history)
	assert.Equal(t, history[0].Name, r.current.Name)
	assert.Len(t, r.old, 2)
	assert.Equal(t, int64(6), r.newRevision, "the highest old revision + 1: the current one keeps its 6")
}

func TestTheCurrentReplicaSetFollowsTheDeployment(t *testing.T) {
	ctx := context.Background()
	history := historyAfter(t, "a")
	d := deployment("a")
	r := revisionsOf(ctx, d, history)
	_, changed := syncCurrent(ctx, d, r)
	assert.False(t, changed, "nothing to write")

	five := int32(5)
	d.Spec.Replicas = &five
	d.Annotations["note"] = "x"
	rs, changed := syncCurrent(ctx, d, r)
	assert.True(t, changed)
	assert.EqualValues(t, 5, *rs.Spec.Replicas)
	assert.Equal(t, "5", rs.Annotations[deploymentutil.DesiredReplicasAnnotation])
	assert.Equal(t, "7", rs.Annotations[deploymentutil.MaxReplicasAnnotation])
	assert.Equal(t, "x", rs.Annotations["note"])
	assert.Equal(t, "1", rs.Annotations[deploymentutil.RevisionAnnotation], "same template, same revision")
	assert.EqualValues(t, 3, *history[0].Spec.Replicas, "the cached object is not modified")

	down, changed := scaledDown(rs)
	assert.True(t, changed)
	assert.EqualValues(t, 0, *down.Spec.Replicas)
	_, changed = scaledDown(down)
	assert.False(t, changed)
}

func TestHistoryLimit(t *testing.T) {
	ctx := context.Background()
	images := []string{"a", "b", "c", "d", "e"}
	history := historyAfter(t, images...)
	d := deployment("e")
	two := int32(2)
	d.Spec.RevisionHistoryLimit = &two
	r := revisionsOf(ctx, d, history)
	for i, rs := range r.old {
		r.old[i], _ = scaledDown(rs)
	}
	var names []string
	for _, rs := range beyondLimit(d, r.old) {
		names = append(names, rs.Name)
	}
	assert.Equal(t, []string{history[0].Name, history[1].Name}, names, "the oldest revisions beyond 2 old ones")

	// One that still runs pods stays, as in Kubernetes.
	r.old[0].Status.Replicas = 2
	names = nil
	for _, rs := range beyondLimit(d, r.old) {
		names = append(names, rs.Name)
	}
	assert.Equal(t, []string{history[1].Name}, names)

	// The default keeps 10.
	d.Spec.RevisionHistoryLimit = nil
	assert.Empty(t, beyondLimit(d, r.old))
	zero := int32(0)
	d.Spec.RevisionHistoryLimit = &zero
	assert.Len(t, beyondLimit(d, r.old), 3, "limit 0 keeps no old revision that is idle")
}
