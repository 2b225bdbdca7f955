package propagation

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScaleRunsOnlyWhenAsked(t *testing.T) {
	def, err := parseScenarios(strings.Join(allScenarios, ","))
	require.NoError(t, err)
	assert.False(t, def[scenarioScale], "not in the default list")
	assert.False(t, def[scenarioAgent], "not in the default list")
	only, err := parseScenarios("scale")
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{scenarioScale: true}, only)
	_, err = parseScenarios("scales")
	assert.ErrorContains(t, err, "known: [burst delete steady deployments scale agent members]")
}

func TestParseObjectCounts(t *testing.T) {
	got, err := parseObjectCounts("10000, 50_000")
	require.NoError(t, err)
	assert.Equal(t, []int{10000, 50000}, got)
	for _, bad := range []string{"", "10k", "5", "1000000"} {
		_, err := parseObjectCounts(bad)
		assert.Error(t, err, bad)
	}
}

func TestTheMixIs45PercentConfigMaps45PercentSecrets10PercentDeployments(t *testing.T) {
	objects := scaleMix(10_000)
	assert.Equal(t, map[string]int{kindConfigMap: 4500, kindSecret: 4500, kindDeployment: 1000}, countKinds(objects))
	perNamespace := map[string]int{}
	names := map[string]bool{}
	for _, o := range objects {
		perNamespace[o.namespace]++
		names[o.kind+"/"+o.namespace+"/"+o.name] = true
	}
	assert.Len(t, perNamespace, scaleNamespaces)
	assert.Equal(t, 2000, perNamespace["scale-0"], "spread evenly")
	assert.Len(t, names, 10_000, "every object its own name")
}

func TestKiBPerCopyIsRSSOverObjectsTimesMembers(t *testing.T) {
	assert.InDelta(t, 2.0, kibPerCopy(58.59375, 10_000, 3), 1e-9, "60,000 KiB over 30,000 copies")
	assert.True(t, kibPerCopy(100, 0, 3) != kibPerCopy(100, 0, 3), "NaN with no objects")
}

func TestVerifiedOnceEveryKindsGaugeIsServedAndAtZero(t *testing.T) {
	_, err := verifiedLeft(map[string]float64{kindConfigMap: 0, kindSecret: 0}, scaleKinds)
	assert.ErrorContains(t, err, `type="deployments"`, "a controller whose caches have not synced")
	left, err := verifiedLeft(map[string]float64{kindConfigMap: 0, kindSecret: 3, kindDeployment: 1, "namespaces": 1}, scaleKinds)
	require.NoError(t, err)
	assert.InDelta(t, 5, left, 0, "every type counts, the namespaces too")
}

func TestTheScaleTableShowsTargetsAndWritesJSON(t *testing.T) {
	bn := &bench{clusters: []string{"c1", "c2", "c3"}, rep: &report{}}
	bn.scaleBelow(10_000, "KiB per copy", 2.5, none, targetKiBPerCopy)
	bn.scaleZero(10_000, "writes", 0)
	bn.scaleAdd(10_000, "RSS MiB", 120, 40)
	var out bytes.Buffer
	bn.rep.printScale(&out)
	assert.Contains(t, out.String(), "| 10000 | 3 | KiB per copy | 2.50 | — | < 2.0 | **no** |")
	assert.Contains(t, out.String(), "| 10000 | 3 | writes | 0.0 | — | = 0 | yes |")
	assert.Contains(t, out.String(), "| 10000 | 3 | RSS MiB | 120 | 40.0 | — | — |")
	b, err := json.Marshal(bn.rep)
	require.NoError(t, err, "no NaN in the JSON")
	assert.Contains(t, string(b), `"figure":"RSS MiB","value":120,"empty":40}`)
}

func TestARunOfTheScaleScenarioAlonePrintsOnlyItsTable(t *testing.T) {
	r := &report{Scale: []scaleRow{{Objects: 20, Clusters: 3, Figure: "load: copies/s", Value: 1}}}
	var out bytes.Buffer
	r.print(&out)
	assert.Contains(t, out.String(), "| objects | N | figure |")
	assert.NotContains(t, out.String(), "| scenario | N |", "no empty propagation or cost table")
}
