package coredns

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/federation-v1/federation/pkg/dnsprovider"
)

// maxAttempts bounds the retries of a name's transaction when its keys
// change between the read and the write.
const maxAttempts = 5

// errConflict is returned when a name's keys kept changing under us.
var errConflict = errors.New("keys changed concurrently")

// apply applies the changes name by name, in order of first appearance; the
// changes of one name are one etcd transaction, so a name never shows both
// its old and new type (A to CNAME) or none of them.
func (z *zone) apply(ctx context.Context, changes []dnsprovider.Change) error {
	var names []string
	byName := map[string][]dnsprovider.Change{}
	for _, ch := range changes {
		if _, seen := byName[ch.RecordSet.Name]; !seen {
			names = append(names, ch.RecordSet.Name)
		}
		byName[ch.RecordSet.Name] = append(byName[ch.RecordSet.Name], ch)
	}
	for _, name := range names {
		if err := z.applyName(ctx, name, byName[name]); err != nil {
			return fmt.Errorf("writing %s to etcd: %w", name, err)
		}
	}
	return nil
}

// stored is a key of ours read from etcd.
type stored struct {
	record
	modRevision int64
}

// applyName reads the keys of one name, computes the keys it should have
// after the changes, and writes only the difference, guarded by the
// revisions read; it retries when another writer got in between.
func (z *zone) applyName(ctx context.Context, name string, changes []dnsprovider.Change) error {
	dir := namePath(z.prefix, name)
	for range maxAttempts {
		current, readRevision, err := z.readName(ctx, dir)
		if err != nil {
			return err
		}
		target := make(map[string]record, len(current))
		for k, s := range current {
			target[k] = s.record
		}
		for _, ch := range changes {
			if err := plan(target, dir, ch); err != nil {
				return err
			}
		}
		cmps, ops, err := diff(current, target)
		if err != nil {
			return err
		}
		if len(ops) == 0 {
			return nil
		}
		// No key under the name may have been created or changed since the
		// read (the per-key guards of diff catch deletions): two upserts
		// with disjoint addresses must not both land and mix.
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(dir+"/"), "<", readRevision+1).WithPrefix())
		resp, err := z.client.Txn(ctx).If(cmps...).Then(ops...).Commit()
		if err != nil {
			return fmt.Errorf("transaction of %d operations under %s/: %w", len(ops), dir, err)
		}
		if resp.Succeeded {
			return nil
		}
	}
	return fmt.Errorf("%w under %s/ in %d attempts", errConflict, dir, maxAttempts)
}

// readName reads the keys of ours directly under dir, and the revision of
// the read.
func (z *zone) readName(ctx context.Context, dir string) (map[string]stored, int64, error) {
	resp, err := z.client.Get(ctx, dir+"/", clientv3.WithPrefix())
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s/: %w", dir, err)
	}
	current := map[string]stored{}
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		if strings.Contains(strings.TrimPrefix(key, dir+"/"), "/") {
			continue // a key of a name below this one
		}
		if r, ok := decode(kv.Value); ok {
			current[key] = stored{record: r, modRevision: kv.ModRevision}
		}
	}
	return current, resp.Header.Revision, nil
}

// plan applies one change to the target keys of a name.
func plan(target map[string]record, dir string, ch dnsprovider.Change) error {
	rs := ch.RecordSet
	exists := false
	for k, r := range target {
		if r.typ == rs.Type {
			exists = true
			if ch.Op != dnsprovider.Add {
				delete(target, k)
			}
		}
	}
	switch ch.Op {
	case dnsprovider.Remove:
		return nil
	case dnsprovider.Add:
		if exists {
			return fmt.Errorf("adding %s %s: %w", rs.Name, rs.Type, dnsprovider.ErrRecordSetExists)
		}
	case dnsprovider.Upsert:
	default:
		return fmt.Errorf("%s %s %s: unknown operation", ch.Op, rs.Name, rs.Type)
	}
	added := map[string]bool{}
	for _, d := range rs.Rrdatas {
		r := record{typ: rs.Type, rrdata: d, ttl: rs.TTL}
		h := host(rs.Type, d)
		if added[h] {
			continue // the same rrdata twice
		}
		added[h] = true
		key := recordKey(dir, h)
		if other, taken := target[key]; taken {
			return fmt.Errorf("%s %s %s: rrdata %s has the same key %s as %s", ch.Op, rs.Name, rs.Type, d, key, other.rrdata)
		}
		target[key] = r
	}
	return nil
}

// diff returns the puts and deletes that turn current into target, each
// guarded by the key's revision as read (created revision 0 for new keys).
// Keys whose record is unchanged are not touched.
func diff(current map[string]stored, target map[string]record) ([]clientv3.Cmp, []clientv3.Op, error) {
	keys := make([]string, 0, len(current)+len(target))
	for k := range current {
		keys = append(keys, k)
	}
	for k := range target {
		if _, ok := current[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var cmps []clientv3.Cmp
	var ops []clientv3.Op
	for _, k := range keys {
		cur, had := current[k]
		want, keep := target[k]
		switch {
		case had && !keep:
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", cur.modRevision))
			ops = append(ops, clientv3.OpDelete(k))
		case keep && (!had || !sameRecord(cur.record, want)):
			value, err := encode(want)
			if err != nil {
				return nil, nil, fmt.Errorf("encoding %s: %w", k, err)
			}
			if had {
				cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", cur.modRevision))
			} else {
				cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(k), "=", 0))
			}
			ops = append(ops, clientv3.OpPut(k, string(value)))
		}
	}
	return cmps, ops, nil
}

// sameRecord compares a stored record with a wanted one by what is stored.
func sameRecord(a, b record) bool {
	return a.typ == b.typ && a.ttl == b.ttl && host(a.typ, a.rrdata) == host(b.typ, b.rrdata)
}
