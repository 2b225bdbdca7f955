package coredns

import (
	"context"
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/federation-v1/federation/pkg/dnsprovider"
	"github.com/federation-v1/federation/test/etcdtest"
)

const (
	global   = "nginx.default.fed.svc.example.com."
	region   = "nginx.default.fed.svc.us-east1.example.com."
	zoneName = "nginx.default.fed.svc.us-east1-b.us-east1.example.com."
	// globalDir is the etcd directory of global, labels reversed.
	globalDir = "/skydns/com/example/svc/fed/default/nginx"
	zoneDir   = "/skydns/com/example/us-east1/us-east1-b/svc/fed/default/nginx"
)

func a(name string, ttl int64, ips ...string) dnsprovider.RecordSet {
	return dnsprovider.RecordSet{Name: name, Type: dnsprovider.A, TTL: ttl, Rrdatas: ips}
}

func cname(name string, ttl int64, target string) dnsprovider.RecordSet {
	return dnsprovider.RecordSet{Name: name, Type: dnsprovider.CNAME, TTL: ttl, Rrdatas: []string{target}}
}

// key is the etcd key v1 wrote for an rrdata: its FNV-32a hash in hex
// under the name's directory.
func key(dir, rrdata string) string {
	h := fnv.New32a()
	h.Write([]byte(rrdata))
	return fmt.Sprintf("%s/%x", dir, h.Sum32())
}

// setup starts an etcd and returns the example.com. zone on it.
func setup(t *testing.T) (*etcdtest.Server, dnsprovider.Zone) {
	t.Helper()
	etcd := etcdtest.Start(t)
	p, err := New(etcd.Client, "/skydns", []string{"example.com"})
	require.NoError(t, err)
	z, err := p.Zone(context.Background(), "example.com.")
	require.NoError(t, err)
	return etcd, z
}

// values returns the keys and values under prefix.
func values(t *testing.T, etcd *etcdtest.Server, prefix string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := etcd.Client.Get(ctx, prefix, clientv3.WithPrefix())
	require.NoError(t, err)
	out := map[string]string{}
	for _, kv := range resp.Kvs {
		out[string(kv.Key)] = string(kv.Value)
	}
	return out
}

func TestProvider(t *testing.T) {
	ctx := context.Background()
	etcd, zone := setup(t)

	t.Run("keys and values in the v1 layout", func(t *testing.T) {
		require.NoError(t, zone.StartChangeset().
			Add(a(global, 180, "1.2.3.4", "5.6.7.8")).
			Add(cname(zoneName, 180, region)).
			Apply(ctx))
		assert.Equal(t, map[string]string{
			key(globalDir, "1.2.3.4"):                                  `{"host":"1.2.3.4","ttl":180}`,
			key(globalDir, "5.6.7.8"):                                  `{"host":"5.6.7.8","ttl":180}`,
			key(zoneDir, "nginx.default.fed.svc.us-east1.example.com"): `{"host":"nginx.default.fed.svc.us-east1.example.com","ttl":180}`,
		}, values(t, etcd, "/skydns/"))
	})

	t.Run("list and get read the record sets back", func(t *testing.T) {
		all, err := zone.List(ctx)
		require.NoError(t, err)
		assert.Equal(t, []dnsprovider.RecordSet{a(global, 180, "1.2.3.4", "5.6.7.8"), cname(zoneName, 180, region)}, all)
		got, err := zone.Get(ctx, "NGINX.default.fed.svc.example.com")
		require.NoError(t, err)
		assert.Equal(t, []dnsprovider.RecordSet{a(global, 180, "1.2.3.4", "5.6.7.8")}, got)
		got, err = zone.Get(ctx, region)
		require.NoError(t, err)
		assert.Empty(t, got)
	})

	t.Run("add of an existing record set fails", func(t *testing.T) {
		err := zone.StartChangeset().Add(a(global, 180, "9.9.9.9")).Apply(ctx)
		assert.ErrorIs(t, err, dnsprovider.ErrRecordSetExists)
		assert.Contains(t, err.Error(), global)
	})

	t.Run("an upsert rewrites only the addresses that changed", func(t *testing.T) {
		before := etcd.Keys(t, globalDir+"/")
		require.NoError(t, zone.StartChangeset().Upsert(a(global, 180, "5.6.7.8", "9.9.9.9")).Apply(ctx))
		after := etcd.Keys(t, globalDir+"/")
		assert.Equal(t, before[key(globalDir, "5.6.7.8")], after[key(globalDir, "5.6.7.8")], "unchanged address rewritten")
		assert.NotContains(t, after, key(globalDir, "1.2.3.4"))
		assert.Contains(t, after, key(globalDir, "9.9.9.9"))
	})

	t.Run("an upsert of the same record set writes nothing", func(t *testing.T) {
		rev := etcd.Revision(t)
		require.NoError(t, zone.StartChangeset().Upsert(a(global, 180, "9.9.9.9", "5.6.7.8")).Apply(ctx))
		assert.Equal(t, rev, etcd.Revision(t))
	})

	t.Run("a TTL change rewrites every key", func(t *testing.T) {
		require.NoError(t, zone.StartChangeset().Upsert(a(global, 30, "9.9.9.9", "5.6.7.8")).Apply(ctx))
		assert.Equal(t, `{"host":"9.9.9.9","ttl":30}`, values(t, etcd, globalDir+"/")[key(globalDir, "9.9.9.9")])
		assert.Equal(t, `{"host":"5.6.7.8","ttl":30}`, values(t, etcd, globalDir+"/")[key(globalDir, "5.6.7.8")])
	})

	t.Run("A to CNAME in one changeset", func(t *testing.T) {
		require.NoError(t, zone.StartChangeset().
			Remove(dnsprovider.RecordSet{Name: global, Type: dnsprovider.A}).
			Add(cname(global, 180, "elsewhere.example.com.")).
			Apply(ctx))
		got, err := zone.Get(ctx, global)
		require.NoError(t, err)
		assert.Equal(t, []dnsprovider.RecordSet{cname(global, 180, "elsewhere.example.com.")}, got)
	})

	t.Run("remove deletes every key of the record set and nothing else", func(t *testing.T) {
		ctxT, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		// Keys this provider did not write: a name below, an SRV record, not JSON.
		foreign := map[string]string{
			globalDir + "/sub/1": `{"host":"10.1.1.1"}`,
			globalDir + "/srv":   `{"host":"a.example.com","port":80}`,
			globalDir + "/junk":  `not json`,
		}
		for k, v := range foreign {
			_, err := etcd.Client.Put(ctxT, k, v)
			require.NoError(t, err)
		}
		require.NoError(t, zone.StartChangeset().
			Remove(dnsprovider.RecordSet{Name: global, Type: dnsprovider.CNAME}).
			Remove(dnsprovider.RecordSet{Name: zoneName, Type: dnsprovider.CNAME}).
			Remove(dnsprovider.RecordSet{Name: region, Type: dnsprovider.A}). // absent: not an error
			Apply(ctx))
		assert.Equal(t, foreign, values(t, etcd, "/skydns/"))
	})

	t.Run("names outside the zone and malformed record sets are refused", func(t *testing.T) {
		err := zone.StartChangeset().Add(a("nginx.example.org.", 180, "1.1.1.1")).Apply(ctx)
		assert.ErrorContains(t, err, "not in zone example.com.")
		err = zone.StartChangeset().Add(a(global, 180, "2001:db8::1")).Apply(ctx)
		assert.ErrorContains(t, err, "not an address of type A")
		err = zone.StartChangeset().Add(dnsprovider.RecordSet{Name: global, Type: dnsprovider.CNAME, Rrdatas: []string{"a.", "b."}}).Apply(ctx)
		assert.ErrorContains(t, err, "want one")
	})
}

func TestZoneNotServed(t *testing.T) {
	p, err := New(etcdtest.Start(t).Client, "", []string{"example.com."})
	require.NoError(t, err)
	_, err = p.Zone(context.Background(), "example.org")
	assert.ErrorIs(t, err, dnsprovider.ErrZoneNotFound)
	zones, err := p.Zones(context.Background())
	require.NoError(t, err)
	require.Len(t, zones, 1)
	assert.Equal(t, "example.com.", zones[0].Name())
}

// TestConcurrentUpserts checks that writers racing on one name each retry
// on the revisions they read and leave exactly one writer's record set.
func TestConcurrentUpserts(t *testing.T) {
	ctx := context.Background()
	etcd, zone := setup(t)
	const writers = 8
	errs := make(chan error, writers)
	for i := range writers {
		go func() {
			// Disjoint addresses: no key guard alone would see the other writers.
			rs := a(global, 180, fmt.Sprintf("10.0.0.%d", i), fmt.Sprintf("10.0.1.%d", i), fmt.Sprintf("10.0.2.%d", i))
			errs <- zone.StartChangeset().Upsert(rs).Apply(ctx)
		}()
	}
	for range writers {
		// A writer may give up after maxAttempts lost races; none may corrupt the set.
		if err := <-errs; err != nil {
			assert.ErrorIs(t, err, errConflict)
		}
	}
	got, err := zone.Get(ctx, global)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Len(t, got[0].Rrdatas, 3, "the keys of exactly one writer: %v", got[0].Rrdatas)
	last := got[0].Rrdatas[0][len("10.0.0."):]
	assert.Equal(t, []string{"10.0.0." + last, "10.0.1." + last, "10.0.2." + last}, got[0].Rrdatas)
	assert.Len(t, etcd.Keys(t, globalDir+"/"), 3)
}
