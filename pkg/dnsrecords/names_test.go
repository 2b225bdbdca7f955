package dnsrecords

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/dnsprovider"
)

// TestDesiredSkipsZonesAndRegionsThatAreNotLabels: a zone or region stored
// before validation existed must never make a name outside the Service's
// own: it makes no name at all, and the cluster still counts where it can.
func TestDesiredSkipsZonesAndRegionsThatAreNotLabels(t *testing.T) {
	cfg := Config{Federation: "fed", Domain: "example.com", Resolve: resolver(nil)}
	valid := healthy("c0", "us-east1", "us-east1-b", "10.0.0.1")
	hostile := []struct {
		name   string
		region string
		zones  []string
	}{
		{name: "slash in the region", region: "a/b", zones: []string{"z"}},
		{name: "dot in the region", region: "svc.victim.default", zones: []string{"z"}},
		{name: "wildcard region", region: "*", zones: []string{"z"}},
		{name: "region too long", region: strings.Repeat("r", 64), zones: []string{"z"}},
		{name: "slash in a zone", region: "us-east1", zones: []string{"a/b"}},
		{name: "dot in a zone", region: "us-east1", zones: []string{"victim.default"}},
		{name: "wildcard zone", region: "us-east1", zones: []string{"*"}},
		{name: "empty zone", region: "us-east1", zones: []string{""}},
		{name: "zone too long", region: "us-east1", zones: []string{strings.Repeat("z", 64)}},
		{name: "underscore", region: "us-east1", zones: []string{"_x"}},
	}
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			evil := Cluster{Name: "evil", Ready: true, HasReadyEndpoints: true, Region: h.region, Zones: h.zones, IngressIPs: []string{"192.0.2.66"}}
			got, err := Desired(context.Background(), cfg, nginx, []Cluster{valid, evil})
			require.NoError(t, err, "one cluster's data does not stop the Service's records")
			n := newNames(cfg.Federation, "example.com.", nginx)
			names := map[string]bool{}
			for _, rs := range got {
				names[rs.Name] = true
				assert.True(t, n.owns(rs.Name), "%s is not one of the Service's names", rs.Name)
				for _, l := range strings.Split(strings.TrimSuffix(rs.Name, "."), ".") {
					assert.True(t, isLabel(l), "label %q of %s", l, rs.Name)
				}
			}
			assert.Contains(t, got, a(global, "10.0.0.1", "192.0.2.66"), "the cluster still counts for the global name")
			assert.Contains(t, got, a(eastB, "10.0.0.1"), "the valid cluster's zone is untouched")
			if h.region == "us-east1" {
				assert.Contains(t, got, a(east, "10.0.0.1", "192.0.2.66"), "a valid region still counts")
				assert.Len(t, names, 3, "no name for the bad zone: %v", names)
			} else {
				assert.Contains(t, got, a(east, "10.0.0.1"), "no region of its own")
				assert.Len(t, names, 3, "no name for the bad region or its zones: %v", names)
			}
		})
	}
}

func TestDesiredLowersUpperCaseLabels(t *testing.T) {
	cfg := Config{Federation: "fed", Domain: "example.com", Resolve: resolver(nil)}
	got, err := Desired(context.Background(), cfg, nginx, []Cluster{healthy("c1", "US-East1", "US-East1-B", "10.0.0.1")})
	require.NoError(t, err)
	assert.ElementsMatch(t, []dnsprovider.RecordSet{a(global, "10.0.0.1"), a(east, "10.0.0.1"), a(eastB, "10.0.0.1")}, got)
}

func TestBuildRefusesWhatIsNotALabel(t *testing.T) {
	n := newNames("fed", "example.com.", nginx)
	for _, bad := range []string{"", "a.b", "a/b", "*", "-a", strings.Repeat("x", 64)} {
		_, err := n.region(bad)
		assert.ErrorContains(t, err, "is not a single DNS label", bad)
		_, err = n.zone(bad, "us-east1")
		assert.ErrorContains(t, err, "is not a single DNS label", bad)
	}
	name, err := n.zone("us-east1-b", "us-east1")
	require.NoError(t, err)
	assert.Equal(t, eastB, name)
}
