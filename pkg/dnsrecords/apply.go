package dnsrecords

import (
	"context"
	"fmt"
	"slices"

	"github.com/federation-v1/federation/pkg/dnsprovider"
)

// Changes returns the changes that turn the Service's existing record sets
// into desired: removals of the record sets no longer wanted (a deleted
// Service has no desired record sets, so all of its names go), upserts of
// those that differ, adds of the new ones, in that order, each group sorted.
// existing may hold the whole zone: only the Service's own names (its
// global name and the names one or two labels below it) are considered.
func Changes(cfg Config, svc Service, desired, existing []dnsprovider.RecordSet) ([]dnsprovider.Change, error) {
	cfg, err := cfg.complete()
	if err != nil {
		return nil, err
	}
	n := newNames(cfg.Federation, cfg.Domain, svc)
	type key struct {
		name string
		typ  dnsprovider.RecordType
	}
	have := map[key]dnsprovider.RecordSet{}
	for _, rs := range existing {
		rs.Name = dnsprovider.CanonicalName(rs.Name)
		if n.owns(rs.Name) {
			have[key{rs.Name, rs.Type}] = rs
		}
	}
	want := map[key]dnsprovider.RecordSet{}
	for _, rs := range desired {
		rs.Name = dnsprovider.CanonicalName(rs.Name)
		if !n.owns(rs.Name) {
			return nil, fmt.Errorf("service %s/%s: desired record set %s is not one of its names", svc.Namespace, svc.Name, rs.Name)
		}
		want[key{rs.Name, rs.Type}] = rs
	}
	var removes, upserts, adds []dnsprovider.Change
	for k, rs := range have {
		w, ok := want[k]
		switch {
		case !ok:
			removes = append(removes, dnsprovider.Change{Op: dnsprovider.Remove, RecordSet: rs})
		case !w.Equal(rs):
			upserts = append(upserts, dnsprovider.Change{Op: dnsprovider.Upsert, RecordSet: w})
		}
	}
	for k, rs := range want {
		if _, ok := have[k]; !ok {
			adds = append(adds, dnsprovider.Change{Op: dnsprovider.Add, RecordSet: rs})
		}
	}
	byRecordSet := func(a, b dnsprovider.Change) int { return dnsprovider.Compare(a.RecordSet, b.RecordSet) }
	slices.SortFunc(removes, byRecordSet)
	slices.SortFunc(upserts, byRecordSet)
	slices.SortFunc(adds, byRecordSet)
	return append(append(removes, upserts...), adds...), nil
}

// Apply makes the Service's record sets in zone equal to desired with the
// fewest changes: it lists the zone, computes Changes and applies them as one
// changeset. It returns the changes applied (none when already in sync).
// Pass no desired record sets to remove every record of a deleted Service.
func Apply(ctx context.Context, cfg Config, svc Service, zone dnsprovider.Zone, desired []dnsprovider.RecordSet) ([]dnsprovider.Change, error) {
	existing, err := zone.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("DNS records of service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	changes, err := Changes(cfg, svc, desired, existing)
	if err != nil {
		return nil, err
	}
	cs := zone.StartChangeset()
	for _, ch := range changes {
		switch ch.Op {
		case dnsprovider.Remove:
			cs.Remove(ch.RecordSet)
		case dnsprovider.Upsert:
			cs.Upsert(ch.RecordSet)
		case dnsprovider.Add:
			cs.Add(ch.RecordSet)
		}
	}
	if err := cs.Apply(ctx); err != nil {
		return nil, fmt.Errorf("DNS records of service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	return changes, nil
}
