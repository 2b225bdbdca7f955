package deploymenthistory

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
)

func TestStatusIsSplitFromTheDeployments(t *testing.T) {
	// Revisions 1 (a), 2 (b) and the current 3 (c).
	history := historyAfter(t, "a", "b", "c")
	for i, rs := range history {
		rs.Generation = int64(i + 10)
	}
	a, b, c := history[0].Name, history[1].Name, history[2].Name
	for _, tt := range []struct {
		name   string
		status appsv1.DeploymentStatus
		want   map[string]appsv1.ReplicaSetStatus
	}{
		{
			name:   "rolled out: exact",
			status: appsv1.DeploymentStatus{Replicas: 9, UpdatedReplicas: 9, ReadyReplicas: 8, AvailableReplicas: 7},
			want: map[string]appsv1.ReplicaSetStatus{
				c: {Replicas: 9, FullyLabeledReplicas: 9, ReadyReplicas: 8, AvailableReplicas: 7, ObservedGeneration: 12},
				b: {ObservedGeneration: 11},
				a: {ObservedGeneration: 10},
			},
		},
		{
			// 4 new pods, 6 old ones (9 ready of 10): at least 3 new pods
			// are ready, since at most 6 of the ready ones are old.
			name:   "during a rollout: the old pods are the previous revision's, the new ones' readiness a lower bound",
			status: appsv1.DeploymentStatus{Replicas: 10, UpdatedReplicas: 4, ReadyReplicas: 9, AvailableReplicas: 8},
			want: map[string]appsv1.ReplicaSetStatus{
				c: {Replicas: 4, FullyLabeledReplicas: 4, ReadyReplicas: 3, AvailableReplicas: 2, ObservedGeneration: 12},
				b: {Replicas: 6, FullyLabeledReplicas: 6, ReadyReplicas: 6, AvailableReplicas: 6, ObservedGeneration: 11},
				a: {ObservedGeneration: 10},
			},
		},
		{
			name:   "new pods not ready yet",
			status: appsv1.DeploymentStatus{Replicas: 12, UpdatedReplicas: 3, ReadyReplicas: 9, AvailableReplicas: 9},
			want: map[string]appsv1.ReplicaSetStatus{
				c: {Replicas: 3, FullyLabeledReplicas: 3, ObservedGeneration: 12},
				b: {Replicas: 9, FullyLabeledReplicas: 9, ReadyReplicas: 9, AvailableReplicas: 9, ObservedGeneration: 11},
				a: {ObservedGeneration: 10},
			},
		},
		{
			name:   "counts that do not add up are bounded (ready never above replicas, available never above ready)",
			status: appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 3, ReadyReplicas: 5, AvailableReplicas: 6},
			want: map[string]appsv1.ReplicaSetStatus{
				c: {Replicas: 3, FullyLabeledReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, ObservedGeneration: 12},
				b: {ObservedGeneration: 11},
				a: {ObservedGeneration: 10},
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := deployment("c")
			d.Status = tt.status
			d.Status.ObservedGeneration = d.Generation
			assert.Equal(t, tt.want, statuses(d, revisionsOf(context.Background(), d, history)))
		})
	}

	t.Run("members behind the Deployment's generation: statuses are kept", func(t *testing.T) {
		d := deployment("c")
		d.Generation = 2
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 9, UpdatedReplicas: 9}
		assert.Nil(t, statuses(d, revisionsOf(context.Background(), d, history)))
	})
}

func TestStatusChanged(t *testing.T) {
	rs := &appsv1.ReplicaSet{Status: appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 3, ObservedGeneration: 2}}
	assert.False(t, statusChanged(rs, appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 3, ObservedGeneration: 2}))
	assert.True(t, statusChanged(rs, appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 3, ObservedGeneration: 3}))
	assert.True(t, statusChanged(rs, appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 2, ObservedGeneration: 2}))
}
