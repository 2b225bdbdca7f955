package clusterstatus

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/clusterhealth"
)

var (
	t0      = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	healthy = clusterhealth.Observation{Reachable: true, Healthy: true, Zones: []string{"z1", "z2"}, Region: "r1"}
	down    = clusterhealth.Observation{Message: "API server unreachable: connection refused"}
	sick    = clusterhealth.Observation{Reachable: true, Message: "/readyz answered 500: etcd failed"}
)

func conditionsOf(s federationv1beta1.ClusterStatus) map[federationv1beta1.ClusterConditionType]federationv1beta1.ClusterCondition {
	out := map[federationv1beta1.ClusterConditionType]federationv1beta1.ClusterCondition{}
	for _, c := range s.Conditions {
		out[c.Type] = c
	}
	return out
}

func TestDesiredStatusPerVerdict(t *testing.T) {
	tests := []struct {
		verdict       clusterhealth.Verdict
		obs           clusterhealth.Observation
		ready, offine corev1.ConditionStatus
		reason        string
	}{
		{clusterhealth.Ready, healthy, corev1.ConditionTrue, corev1.ConditionFalse, ReasonReady},
		{clusterhealth.NotReady, sick, corev1.ConditionFalse, corev1.ConditionFalse, ReasonNotReady},
		{clusterhealth.Offline, down, corev1.ConditionUnknown, corev1.ConditionTrue, ReasonNotReachable},
	}
	for _, tt := range tests {
		t.Run(string(tt.verdict), func(t *testing.T) {
			got, changed := desiredStatus(federationv1beta1.ClusterStatus{}, tt.verdict, tt.obs, t0)
			assert.True(t, changed)
			c := conditionsOf(got)
			assert.Equal(t, tt.ready, c[federationv1beta1.ClusterReady].Status)
			assert.Equal(t, tt.reason, c[federationv1beta1.ClusterReady].Reason)
			assert.Equal(t, tt.offine, c[federationv1beta1.ClusterOffline].Status)
			if tt.verdict != clusterhealth.Ready {
				assert.Equal(t, tt.obs.Message, c[federationv1beta1.ClusterReady].Message)
			}
		})
	}
}

func TestDesiredStatusKeepsTransitionTimesAndSkipsNoOpWrites(t *testing.T) {
	first, _ := desiredStatus(federationv1beta1.ClusterStatus{}, clusterhealth.Ready, healthy, t0)
	assert.Equal(t, []string{"z1", "z2"}, first.Zones)
	assert.Equal(t, "r1", first.Region)

	same, changed := desiredStatus(first, clusterhealth.Ready, healthy, t0.Add(10*time.Second))
	assert.False(t, changed, "nothing changed: no write")
	assert.Equal(t, t0, conditionsOf(same)[federationv1beta1.ClusterReady].LastTransitionTime.Time)

	_, changed = desiredStatus(first, clusterhealth.Ready, healthy, t0.Add(heartbeat))
	assert.True(t, changed, "a heartbeat write after a minute")

	moved := healthy
	moved.Zones = []string{"z1"}
	_, changed = desiredStatus(first, clusterhealth.Ready, moved, t0.Add(time.Second))
	assert.True(t, changed, "a zone change is written at once")

	offline, changed := desiredStatus(first, clusterhealth.Offline, down, t0.Add(20*time.Second))
	assert.True(t, changed)
	c := conditionsOf(offline)
	assert.Equal(t, t0.Add(20*time.Second), c[federationv1beta1.ClusterReady].LastTransitionTime.Time)
	assert.Equal(t, []string{"z1", "z2"}, offline.Zones, "zones are kept while the cluster cannot be read")
}

func TestDesiredStatusWithinThresholdKeepsTheVerdict(t *testing.T) {
	first, _ := desiredStatus(federationv1beta1.ClusterStatus{}, clusterhealth.Ready, healthy, t0)
	// One lost probe: the tracker still says Ready.
	got, changed := desiredStatus(first, clusterhealth.Ready, down, t0.Add(10*time.Second))
	assert.False(t, changed)
	assert.Equal(t, corev1.ConditionTrue, conditionsOf(got)[federationv1beta1.ClusterReady].Status)
}

func TestDesiredStatusSaysWhyCredentialsWereRefused(t *testing.T) {
	refused := clusterhealth.Observation{Reachable: true, Reason: "InvalidCredentials", Message: "cluster c1: credentials Secret refused"}
	got, _ := desiredStatus(federationv1beta1.ClusterStatus{}, clusterhealth.NotReady, refused, t0)
	ready := conditionsOf(got)[federationv1beta1.ClusterReady]
	assert.Equal(t, "InvalidCredentials", ready.Reason)
	assert.Equal(t, refused.Message, ready.Message)

	// A lost probe within the threshold keeps what the verdict said.
	kept, _ := desiredStatus(got, clusterhealth.NotReady, down, t0.Add(time.Second))
	assert.Equal(t, "InvalidCredentials", conditionsOf(kept)[federationv1beta1.ClusterReady].Reason)

	long := sick
	long.Message = strings.Repeat("x", 100000)
	got, _ = desiredStatus(federationv1beta1.ClusterStatus{}, clusterhealth.NotReady, long, t0)
	assert.LessOrEqual(t, len(conditionsOf(got)[federationv1beta1.ClusterReady].Message), maxMessage+3)
}

func TestDesiredStatusDropsZonesThatAreNotLabels(t *testing.T) {
	// Written before the apiserver validated them: kept, every status
	// write would be refused.
	prev := federationv1beta1.ClusterStatus{Zones: []string{"z1", "a/b", "*", "x.y"}, Region: "a/b"}
	got, changed := desiredStatus(prev, clusterhealth.Offline, down, t0)
	assert.True(t, changed)
	assert.Equal(t, []string{"z1"}, got.Zones)
	assert.Empty(t, got.Region)
}
