package coredns

import (
	"context"
	"fmt"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/federation-v1/federation/pkg/dnsprovider"
)

// zone is one zone's records in etcd.
type zone struct {
	name   string
	client *clientv3.Client
	prefix string
}

// Name returns the canonical zone name.
func (z *zone) Name() string { return z.name }

// StartChangeset begins a changeset applied by z.apply.
func (z *zone) StartChangeset() *dnsprovider.Changeset {
	return dnsprovider.NewChangeset(z.name, z.apply)
}

// List reads every record of the zone with one range read.
func (z *zone) List(ctx context.Context) ([]dnsprovider.RecordSet, error) {
	dir := namePath(z.prefix, z.name)
	resp, err := z.client.Get(ctx, dir+"/", clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("listing zone %s from etcd %s/: %w", z.name, dir, err)
	}
	return group(z.prefix, resp), nil
}

// Get reads the records of one name.
func (z *zone) Get(ctx context.Context, name string) ([]dnsprovider.RecordSet, error) {
	name = dnsprovider.CanonicalName(name)
	if !dnsprovider.IsSubDomain(z.name, name) {
		return nil, fmt.Errorf("getting %s: name is not in zone %s", name, z.name)
	}
	dir := namePath(z.prefix, name)
	resp, err := z.client.Get(ctx, dir+"/", clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("getting %s from etcd %s/: %w", name, dir, err)
	}
	var direct []dnsprovider.RecordSet
	for _, rs := range group(z.prefix, resp) {
		if rs.Name == name {
			direct = append(direct, rs)
		}
	}
	return direct, nil
}

// group turns keys into record sets: one per directory and type, sorted,
// with sorted rrdatas and the smallest TTL of the keys.
func group(prefix string, resp *clientv3.GetResponse) []dnsprovider.RecordSet {
	type nameType struct {
		dir string
		typ dnsprovider.RecordType
	}
	sets := map[nameType]*dnsprovider.RecordSet{}
	for _, kv := range resp.Kvs {
		r, ok := decode(kv.Value)
		if !ok {
			continue
		}
		key := string(kv.Key)
		dir := key[:strings.LastIndex(key, "/")]
		nt := nameType{dir, r.typ}
		rs, seen := sets[nt]
		if !seen {
			rs = &dnsprovider.RecordSet{Name: nameOf(prefix, dir), Type: r.typ, TTL: r.ttl}
			sets[nt] = rs
		}
		rs.TTL = min(rs.TTL, r.ttl)
		rs.Rrdatas = append(rs.Rrdatas, r.rrdata)
	}
	out := make([]dnsprovider.RecordSet, 0, len(sets))
	for _, rs := range sets {
		slices.Sort(rs.Rrdatas)
		out = append(out, *rs)
	}
	slices.SortFunc(out, dnsprovider.Compare)
	return out
}
