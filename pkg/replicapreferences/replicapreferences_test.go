package replicapreferences

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
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
		{
			name:  "the largest values",
			value: `{"clusters":{"c1":{"minReplicas":2147483647,"maxReplicas":2147483647,"weight":2147483647}}}`,
			want: &Preferences{Clusters: map[string]ClusterPreferences{
				"c1": {MinReplicas: MaxValue, MaxReplicas: ptr(MaxValue), Weight: MaxValue},
			}},
		},
		{name: "weight above int32", value: `{"clusters":{"c1":{"weight":4611686018427387904}}}`, wantErr: "clusters[c1].weight: Invalid value: 4611686018427387904: must be at most 2147483647"},
		{name: "minimum above int32", value: `{"clusters":{"*":{"minReplicas":2147483648}}}`, wantErr: "clusters[*].minReplicas"},
		{name: "maximum above int32", value: `{"clusters":{"c1":{"maxReplicas":2147483648}}}`, wantErr: "clusters[c1].maxReplicas"},
		{name: "negative maximum", value: `{"clusters":{"c1":{"maxReplicas":-1}}}`, wantErr: "clusters[c1].maxReplicas: Invalid value: -1: must not be negative"},
		{name: "beyond int64", value: `{"clusters":{"c1":{"weight":1e30}}}`, wantErr: "not a JSON object"},
		{name: "too large", value: `{"clusters":{"c1":{"weight":1}}}` + strings.Repeat(" ", MaxSize), wantErr: "Too long"},
		{name: "too many clusters", value: manyClusters(MaxClusters + 1), wantErr: "clusters: Too many"},
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

// manyClusters is a value with n clusters of weight 1.
func manyClusters(n int) string {
	entries := make([]string, n)
	for i := range entries {
		entries[i] = fmt.Sprintf(`"c%d":{"weight":1}`, i)
	}
	return `{"clusters":{` + strings.Join(entries, ",") + `}}`
}

func TestParseField(t *testing.T) {
	path := field.NewPath("metadata", "annotations").Key(federationv1beta1.DeploymentPreferencesAnnotation)
	_, errs := ParseField(`{"clusters":{"cluster1":{"weight":4611686018427387904},"cluster2":{"minReplicas":-1}}}`, path)
	require.Len(t, errs, 2)
	assert.Equal(t, "metadata.annotations["+federationv1beta1.DeploymentPreferencesAnnotation+"].clusters[cluster1].weight", errs[0].Field)
	assert.Equal(t, "metadata.annotations["+federationv1beta1.DeploymentPreferencesAnnotation+"].clusters[cluster2].minReplicas", errs[1].Field)

	_, errs = ParseField(`{"clusters":`, path)
	require.Len(t, errs, 1)
	assert.Equal(t, "metadata.annotations["+federationv1beta1.DeploymentPreferencesAnnotation+"]", errs[0].Field, "a value that does not parse is named as a whole")

	p, errs := ParseField(manyClusters(MaxClusters), path)
	require.Empty(t, errs)
	assert.Len(t, p.Clusters, MaxClusters)
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
