// Package fake is an in-memory dnsprovider for tests of code that writes
// DNS records. It has the same change semantics as the real providers and
// records every applied change.
package fake

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/federation-v1/federation/pkg/dnsprovider"
)

// Provider is an in-memory DNS provider.
type Provider struct {
	mu    sync.Mutex
	zones map[string]*Zone
}

var _ dnsprovider.Interface = (*Provider)(nil)

// New returns a provider serving empty zones of the given names.
func New(zones ...string) *Provider {
	p := &Provider{zones: map[string]*Zone{}}
	for _, z := range zones {
		z = dnsprovider.CanonicalName(z)
		p.zones[z] = &Zone{name: z, sets: map[key]dnsprovider.RecordSet{}}
	}
	return p
}

// Zones returns the zones, sorted by name.
func (p *Provider) Zones(context.Context) ([]dnsprovider.Zone, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []dnsprovider.Zone
	for _, z := range p.zones {
		out = append(out, z)
	}
	slices.SortFunc(out, func(a, b dnsprovider.Zone) int {
		if a.Name() < b.Name() {
			return -1
		}
		return 1
	})
	return out, nil
}

// Zone returns the zone of that name.
func (p *Provider) Zone(_ context.Context, name string) (dnsprovider.Zone, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	z, ok := p.zones[dnsprovider.CanonicalName(name)]
	if !ok {
		return nil, fmt.Errorf("fake dns provider: zone %s: %w", name, dnsprovider.ErrZoneNotFound)
	}
	return z, nil
}

// key identifies a record set.
type key struct {
	name string
	typ  dnsprovider.RecordType
}

// Zone is an in-memory zone.
type Zone struct {
	mu   sync.Mutex
	name string
	sets map[key]dnsprovider.RecordSet
	// applied holds every successfully applied changeset.
	applied [][]dnsprovider.Change
}

// Name returns the zone's canonical name.
func (z *Zone) Name() string { return z.name }

// List returns every record set, sorted.
func (z *Zone) List(context.Context) ([]dnsprovider.RecordSet, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	out := make([]dnsprovider.RecordSet, 0, len(z.sets))
	for _, rs := range z.sets {
		out = append(out, clone(rs))
	}
	slices.SortFunc(out, dnsprovider.Compare)
	return out, nil
}

// Get returns the record sets of one name.
func (z *Zone) Get(ctx context.Context, name string) ([]dnsprovider.RecordSet, error) {
	all, _ := z.List(ctx)
	var out []dnsprovider.RecordSet
	for _, rs := range all {
		if rs.Name == dnsprovider.CanonicalName(name) {
			out = append(out, rs)
		}
	}
	return out, nil
}

// StartChangeset begins a changeset; its Apply is atomic for the whole set.
func (z *Zone) StartChangeset() *dnsprovider.Changeset {
	return dnsprovider.NewChangeset(z.name, z.apply)
}

// Applied returns the changesets applied so far, in order.
func (z *Zone) Applied() [][]dnsprovider.Change {
	z.mu.Lock()
	defer z.mu.Unlock()
	return slices.Clone(z.applied)
}

func (z *Zone) apply(_ context.Context, changes []dnsprovider.Change) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	next := make(map[key]dnsprovider.RecordSet, len(z.sets))
	for k, rs := range z.sets {
		next[k] = rs
	}
	for _, ch := range changes {
		k := key{ch.RecordSet.Name, ch.RecordSet.Type}
		switch ch.Op {
		case dnsprovider.Add:
			if _, ok := next[k]; ok {
				return fmt.Errorf("adding %s %s: %w", k.name, k.typ, dnsprovider.ErrRecordSetExists)
			}
			next[k] = clone(ch.RecordSet)
		case dnsprovider.Upsert:
			next[k] = clone(ch.RecordSet)
		case dnsprovider.Remove:
			delete(next, k)
		default:
			return fmt.Errorf("%s %s %s: unknown operation", ch.Op, k.name, k.typ)
		}
	}
	z.sets = next
	z.applied = append(z.applied, slices.Clone(changes))
	return nil
}

func clone(rs dnsprovider.RecordSet) dnsprovider.RecordSet {
	rs.Rrdatas = slices.Clone(rs.Rrdatas)
	slices.Sort(rs.Rrdatas)
	return rs
}
