package dnsrecords

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/dnsprovider"
	"github.com/federation-v1/federation/pkg/dnsprovider/fake"
)

var testConfig = Config{Federation: "fed", Domain: "example.com."}

func change(op dnsprovider.Op, rs dnsprovider.RecordSet) dnsprovider.Change {
	return dnsprovider.Change{Op: op, RecordSet: rs}
}

// Record sets of other services and other federations that no change of
// nginx may touch.
var others = []dnsprovider.RecordSet{
	a("nginx2.default.fed.svc.example.com.", "10.9.0.1"),
	a("nginx.other.fed.svc.example.com.", "10.9.0.2"),
	a("nginx.default.fed2.svc.example.com.", "10.9.0.3"),
	a("x.nginx.default.fed.svc.example.com.", "10.9.0.4"),
	a("nginx.default.fed.svc.a.b.c.example.com.", "10.9.0.5"),
	a("www.example.com.", "10.9.0.6"),
}

func TestChanges(t *testing.T) {
	tests := []struct {
		name     string
		desired  []dnsprovider.RecordSet
		existing []dnsprovider.RecordSet
		want     []dnsprovider.Change
	}{{
		name:     "new records are added",
		desired:  []dnsprovider.RecordSet{a(global, "10.0.0.1"), a(east, "10.0.0.1")},
		existing: others,
		want:     []dnsprovider.Change{change(dnsprovider.Add, a(global, "10.0.0.1")), change(dnsprovider.Add, a(east, "10.0.0.1"))},
	}, {
		name:     "records already right are left alone, whatever their order",
		desired:  []dnsprovider.RecordSet{a(global, "10.0.0.1", "10.0.0.2")},
		existing: append([]dnsprovider.RecordSet{a(global, "10.0.0.2", "10.0.0.1")}, others...),
		want:     nil,
	}, {
		name:     "changed addresses are an upsert",
		desired:  []dnsprovider.RecordSet{a(global, "10.0.0.1", "10.0.0.3")},
		existing: []dnsprovider.RecordSet{a(global, "10.0.0.1", "10.0.0.2")},
		want:     []dnsprovider.Change{change(dnsprovider.Upsert, a(global, "10.0.0.1", "10.0.0.3"))},
	}, {
		name:     "a changed TTL is an upsert",
		desired:  []dnsprovider.RecordSet{withTTL(a(global, "10.0.0.1"), 60)},
		existing: []dnsprovider.RecordSet{a(global, "10.0.0.1")},
		want:     []dnsprovider.Change{change(dnsprovider.Upsert, withTTL(a(global, "10.0.0.1"), 60))},
	}, {
		name:     "a zone losing its addresses turns from A into a CNAME",
		desired:  []dnsprovider.RecordSet{a(global, "10.0.0.1"), a(east, "10.0.0.1"), cname(eastB, east)},
		existing: []dnsprovider.RecordSet{a(global, "10.0.0.1"), a(east, "10.0.0.1"), a(eastB, "10.0.0.9")},
		want:     []dnsprovider.Change{change(dnsprovider.Remove, a(eastB, "10.0.0.9")), change(dnsprovider.Add, cname(eastB, east))},
	}, {
		name:     "names no longer wanted are removed (a cluster left)",
		desired:  []dnsprovider.RecordSet{a(global, "10.0.0.1"), a(east, "10.0.0.1"), a(eastB, "10.0.0.1")},
		existing: append([]dnsprovider.RecordSet{a(global, "10.0.0.1"), a(east, "10.0.0.1"), a(eastB, "10.0.0.1"), cname(westA, west), cname(west, global)}, others...),
		want:     []dnsprovider.Change{change(dnsprovider.Remove, cname(westA, west)), change(dnsprovider.Remove, cname(west, global))},
	}, {
		name:     "a deleted service loses every record, and only its own",
		desired:  nil,
		existing: append([]dnsprovider.RecordSet{a(global, "10.0.0.1"), aaaa(global, "2001:db8::1"), a(east, "10.0.0.1"), cname(eastC, east)}, others...),
		want: []dnsprovider.Change{
			change(dnsprovider.Remove, a(global, "10.0.0.1")), change(dnsprovider.Remove, aaaa(global, "2001:db8::1")),
			change(dnsprovider.Remove, cname(eastC, east)), change(dnsprovider.Remove, a(east, "10.0.0.1")),
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Changes(testConfig, nginx, tt.desired, tt.existing)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestChangesRejectsForeignNames(t *testing.T) {
	_, err := Changes(testConfig, nginx, []dnsprovider.RecordSet{a("www.example.com.", "10.0.0.1")}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "default/nginx")
}

func TestApply(t *testing.T) {
	ctx := context.Background()
	provider := fake.New("example.com.")
	z, err := provider.Zone(ctx, "example.com")
	require.NoError(t, err)
	zone := z.(*fake.Zone)

	// Another service's records, which nginx's changes must keep.
	other := Service{Namespace: "default", Name: "nginx2"}
	otherSets := []dnsprovider.RecordSet{a("nginx2.default.fed.svc.example.com.", "10.9.0.1")}
	_, err = Apply(ctx, testConfig, other, zone, otherSets)
	require.NoError(t, err)

	clusters := []Cluster{
		healthy("c1", "us-east1", "us-east1-b", "10.0.0.1", "10.0.0.2"),
		healthy("c2", "us-east1", "us-east1-c", "10.0.0.3"),
	}
	sync := func() []dnsprovider.Change {
		t.Helper()
		desired, err := Desired(ctx, testConfig, nginx, clusters)
		require.NoError(t, err)
		changes, err := Apply(ctx, testConfig, nginx, zone, desired)
		require.NoError(t, err)
		return changes
	}

	assert.Len(t, sync(), 4, "first sync adds global, region and two zones")
	assert.Empty(t, sync(), "a second sync with nothing changed writes nothing")

	clusters[1].Ready = false
	assert.Equal(t, []dnsprovider.Change{
		change(dnsprovider.Upsert, a(global, "10.0.0.1", "10.0.0.2")),
		change(dnsprovider.Upsert, a(east, "10.0.0.1", "10.0.0.2")),
		change(dnsprovider.Remove, a(eastC, "10.0.0.3")),
		change(dnsprovider.Add, cname(eastC, east)),
	}, sortedByOp(sync()))

	// The service is deleted: nothing is desired, every record goes.
	changes, err := Apply(ctx, testConfig, nginx, zone, nil)
	require.NoError(t, err)
	assert.Len(t, changes, 4)
	left, err := zone.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, otherSets, left)
	assert.Len(t, zone.Applied(), 4, "one changeset per sync that changed something")
}

// sortedByOp orders changes as upserts, removes, adds, for readable expectations.
func sortedByOp(changes []dnsprovider.Change) []dnsprovider.Change {
	var out []dnsprovider.Change
	for _, op := range []dnsprovider.Op{dnsprovider.Upsert, dnsprovider.Remove, dnsprovider.Add} {
		for _, ch := range changes {
			if ch.Op == op {
				out = append(out, ch)
			}
		}
	}
	return out
}
