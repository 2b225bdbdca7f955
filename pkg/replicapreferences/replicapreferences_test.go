package replicapreferences

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr(i int64) *int64 { return &i }

func TestParse(t *testing.T) {
	cases := []struct {
		name    string
		value   string
		want    *Preferences
		wantErr string
	}{
		{
			name:  "current spelling",
			value: `{"rebalance":true,"clusters":{"us-east":{"minReplicas":2,"maxReplicas":10,"weight":3},"*":{"weight":1}}}`,
			want: &Preferences{Rebalance: true, Clusters: map[string]ClusterPreferences{
				"us-east": {MinReplicas: 2, MaxReplicas: ptr(10), Weight: 3},
				"*":       {Weight: 1},
			}},
		},
		{
			name:  "v1 spelling",
			value: `{"Rebalance":false,"Clusters":{"c1":{"MinReplicas":1,"MaxReplicas":4,"Weight":2}}}`,
			want: &Preferences{Clusters: map[string]ClusterPreferences{
				"c1": {MinReplicas: 1, MaxReplicas: ptr(4), Weight: 2},
			}},
		},
		{name: "empty object", value: `{}`, want: &Preferences{}},
		{name: "unknown top-level field", value: `{"clusters":{},"spread":true}`, wantErr: `unknown field "spread"`},
		{name: "unknown cluster field", value: `{"clusters":{"c1":{"weight":1,"min":1}}}`, wantErr: `unknown field "min"`},
		{name: "wrong type", value: `{"rebalance":"yes"}`, wantErr: "not a JSON object"},
		{name: "not JSON", value: `weight=1`, wantErr: "not a JSON object"},
		{name: "trailing data", value: `{} {}`, wantErr: "unexpected data"},
		{name: "negative weight", value: `{"clusters":{"c1":{"weight":-1}}}`, wantErr: "negative"},
		{name: "negative minimum", value: `{"clusters":{"c1":{"minReplicas":-1}}}`, wantErr: "negative"},
		{name: "max under min", value: `{"clusters":{"c1":{"minReplicas":3,"maxReplicas":2}}}`, wantErr: "less than minReplicas"},
		{name: "bad cluster name", value: `{"clusters":{"Not_A_Name":{"weight":1}}}`, wantErr: "not a cluster name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(c.value)
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestForCluster(t *testing.T) {
	p := &Preferences{Clusters: map[string]ClusterPreferences{"c1": {Weight: 1}, "c2": {Weight: 2}}}
	got, ok := p.ForCluster("c2")
	assert.True(t, ok)
	assert.Equal(t, int64(2), got.Weight)
	_, ok = p.ForCluster("c0")
	assert.False(t, ok, "a cluster with no entry and no * gets nothing")

	got, ok = Default().ForCluster("any")
	assert.True(t, ok, "the default spreads over every cluster")
	assert.Equal(t, int64(1), got.Weight)
}
