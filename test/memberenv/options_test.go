package memberenv

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultClustersSpanTwoRegionsAndThreeZones(t *testing.T) {
	specs := DefaultClusters(3, 2)
	regions, zones := map[string]bool{}, map[string]bool{}
	for i, s := range specs {
		assert.Equal(t, []string{"cluster1", "cluster2", "cluster3"}[i], s.Name)
		assert.Equal(t, 2, s.Nodes)
		regions[s.Region] = true
		for _, z := range s.Zones {
			zones[z] = true
		}
	}
	assert.Len(t, regions, 2)
	assert.Len(t, zones, 3)
}

func TestDefaultClustersStayDistinctPastTheTable(t *testing.T) {
	specs := DefaultClusters(12, 1)
	seen := map[string]string{}
	for _, s := range specs {
		zone := s.Zones[0]
		require.NotContains(t, seen, zone, "%s and %s share zone %s", seen[zone], s.Name, zone)
		seen[zone] = s.Name
	}
}

func TestApplyTopology(t *testing.T) {
	tests := []struct {
		name      string
		overrides []string
		wantErr   string
		check     func(t *testing.T, specs []ClusterSpec)
	}{
		{
			name:      "multi-zone cluster",
			overrides: []string{"cluster2=europe-west1:europe-west1-b,europe-west1-c"},
			check: func(t *testing.T, specs []ClusterSpec) {
				assert.Equal(t, "europe-west1", specs[1].Region)
				assert.Equal(t, []string{"europe-west1-b", "europe-west1-c"}, specs[1].Zones)
				assert.Equal(t, "us-east1", specs[0].Region, "other clusters keep theirs")
			},
		},
		{name: "unknown cluster", overrides: []string{"cluster9=r:z"}, wantErr: `no cluster named "cluster9"`},
		{name: "missing zone", overrides: []string{"cluster1=us-east1"}, wantErr: "want CLUSTER=REGION:ZONE"},
		{name: "missing region", overrides: []string{"cluster1=:z"}, wantErr: "want CLUSTER=REGION:ZONE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs := DefaultClusters(3, 2)
			err := ApplyTopology(specs, tt.overrides)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, specs)
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	ok := DefaultClusters(2, 1)
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{name: "valid", opts: Options{Dir: "x", Clusters: ok}},
		{name: "no dir", opts: Options{Clusters: ok}, wantErr: "Dir is empty"},
		{name: "no clusters", opts: Options{Dir: "x"}, wantErr: "no clusters"},
		{name: "duplicate", opts: Options{Dir: "x", Clusters: []ClusterSpec{ok[0], ok[0]}}, wantErr: "listed twice"},
		{name: "no nodes", opts: Options{Dir: "x", Clusters: []ClusterSpec{{Name: "c", Region: "r", Zones: []string{"z"}}}}, wantErr: "at least one node"},
		{name: "no zone", opts: Options{Dir: "x", Clusters: []ClusterSpec{{Name: "c", Region: "r", Nodes: 1}}}, wantErr: "region and at least one zone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.validate()
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}

func TestNodeObjectsSpreadZonesAndCarryBothLabelSets(t *testing.T) {
	m := &Member{Spec: ClusterSpec{Name: "c1", Region: "r1", Zones: []string{"z1", "z2"}, Nodes: 3}}
	nodes := m.nodeObjects()
	require.Len(t, nodes, 3)
	var zones []string
	for _, n := range nodes {
		zones = append(zones, n.Labels[ZoneLabel])
		assert.Equal(t, n.Labels[ZoneLabel], n.Labels[LegacyZoneLabel])
		assert.Equal(t, "r1", n.Labels[RegionLabel])
		assert.Equal(t, "r1", n.Labels[LegacyRegionLabel])
	}
	assert.Equal(t, []string{"z1", "z2", "z1"}, zones)
}
