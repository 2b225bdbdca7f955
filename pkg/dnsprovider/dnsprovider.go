// Package dnsprovider is the interface between the federation and a DNS
// service, in the spirit of Federation v1's dnsprovider: a provider serves
// zones, a zone holds resource record sets, and record sets change through
// changesets of adds, removes and upserts applied together.
//
// Names are fully qualified, lower case and end with a dot
// ("nginx.default.fed.svc.example.com."); CanonicalName makes them so.
package dnsprovider

import (
	"context"
	"strings"
)

// Interface is a DNS service holding zones.
type Interface interface {
	// Zones lists the zones the provider serves.
	Zones(ctx context.Context) ([]Zone, error)
	// Zone returns the zone with the given name, or an error wrapping
	// ErrZoneNotFound when the provider does not serve it.
	Zone(ctx context.Context, name string) (Zone, error)
}

// Zone is one DNS zone and its record sets.
type Zone interface {
	// Name is the zone's canonical name, e.g. "example.com.".
	Name() string
	// List returns every record set of the zone, sorted by name and type.
	List(ctx context.Context) ([]RecordSet, error)
	// Get returns the record sets of one name (one per type), sorted by type.
	Get(ctx context.Context, name string) ([]RecordSet, error)
	// StartChangeset begins a changeset against this zone.
	StartChangeset() *Changeset
}

// CanonicalName returns name in lower case with a final dot.
func CanonicalName(name string) string {
	name = strings.ToLower(name)
	if !strings.HasSuffix(name, ".") {
		name += "."
	}
	return name
}
