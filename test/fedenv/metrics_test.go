package fedenv

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMetricByLabel(t *testing.T) {
	body := `# HELP federation_sync_member_writes_total Member writes.
# TYPE federation_sync_member_writes_total counter
federation_sync_member_writes_total{cluster="c1",type="deployments",verb="apply"} 3
federation_sync_member_writes_total{cluster="c1",type="deployments",verb="delete"} 1
federation_sync_member_writes_total{cluster="c2",type="deployments",verb="apply"} 2
federation_sync_member_writes_total{cluster="c2",type="configmaps",verb="apply"} 7
`
	byCluster, err := MetricByLabel(body, "federation_sync_member_writes_total", "cluster", map[string]string{"type": "deployments"})
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"c1": 4, "c2": 2}, byCluster)
	byVerb, err := MetricByLabel(body, "federation_sync_member_writes_total", "verb", map[string]string{"cluster": "c2"})
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"apply": 9}, byVerb)
	none, err := MetricByLabel(body, "no_such_metric", "cluster", nil)
	require.NoError(t, err)
	assert.Empty(t, none)
	_, err = MetricByLabel("not {metrics", "x", "y", nil)
	assert.Error(t, err)
}
