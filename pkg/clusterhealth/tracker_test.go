package clusterhealth

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

var (
	up          = Observation{Reachable: true, Healthy: true}
	notReady    = Observation{Reachable: true}
	unreachable = Observation{}
)

func TestTracker(t *testing.T) {
	tests := []struct {
		name       string
		thresholds Thresholds
		probes     []Observation
		want       []Verdict
	}{
		{
			name:   "the first probe decides at once",
			probes: []Observation{unreachable},
			want:   []Verdict{Offline},
		},
		{
			name:   "one lost probe does not flap a ready cluster",
			probes: []Observation{up, unreachable, up, unreachable, up},
			want:   []Verdict{Ready, Ready, Ready, Ready, Ready},
		},
		{
			name:   "two lost probes in a row make it Offline",
			probes: []Observation{up, unreachable, unreachable},
			want:   []Verdict{Ready, Ready, Offline},
		},
		{
			name:   "recovery is trusted at once by default",
			probes: []Observation{unreachable, up},
			want:   []Verdict{Offline, Ready},
		},
		{
			name:       "a success threshold delays recovery",
			thresholds: Thresholds{Failure: 1, Success: 3},
			probes:     []Observation{unreachable, up, up, unreachable, up, up, up},
			want:       []Verdict{Offline, Offline, Offline, Offline, Offline, Offline, Ready},
		},
		{
			name:   "reachable but not ready is NotReady",
			probes: []Observation{up, notReady, notReady, unreachable, unreachable},
			want:   []Verdict{Ready, Ready, NotReady, NotReady, Offline},
		},
		{
			name:   "a streak counts only the same verdict",
			probes: []Observation{up, notReady, unreachable, notReady, unreachable},
			want:   []Verdict{Ready, Ready, Ready, Ready, Ready},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := Tracker{Thresholds: DefaultThresholds}
			if tt.thresholds != (Thresholds{}) {
				tr.Thresholds = tt.thresholds
			}
			var got []Verdict
			for _, p := range tt.probes {
				v, _ := tr.Observe(p)
				got = append(got, v)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestObserveReportsChanges(t *testing.T) {
	tr := Tracker{Thresholds: Thresholds{Failure: 1, Success: 1}}
	_, changed := tr.Observe(up)
	assert.True(t, changed, "the first verdict is a change")
	_, changed = tr.Observe(up)
	assert.False(t, changed)
	v, changed := tr.Observe(notReady)
	assert.True(t, changed)
	assert.Equal(t, NotReady, v)
}
