package dnsprovider

import (
	"context"
	"errors"
	"fmt"
)

// ErrZoneNotFound is wrapped by Interface.Zone when the zone is not served.
var ErrZoneNotFound = errors.New("zone not found")

// ErrRecordSetExists is wrapped by Changeset.Apply when an Add meets a
// record set of the same name and type.
var ErrRecordSetExists = errors.New("record set already exists")

// Op is what a change does to a record set.
type Op string

// The operations of a changeset.
const (
	// Add creates a record set; it fails if one of that name and type exists.
	Add Op = "add"
	// Remove deletes the record set of that name and type, whatever its
	// rrdatas; removing an absent record set is not an error.
	Remove Op = "remove"
	// Upsert makes the record set of that name and type exactly the given one.
	Upsert Op = "upsert"
)

// Change is one operation of a changeset.
type Change struct {
	// Op is the operation.
	Op Op
	// RecordSet is what the operation acts on; Remove uses only its name and type.
	RecordSet RecordSet
}

// ApplyFunc applies validated changes to a zone, in order.
type ApplyFunc func(ctx context.Context, changes []Change) error

// Changeset collects changes to one zone and applies them together. Providers
// create it with NewChangeset; users get it from Zone.StartChangeset.
type Changeset struct {
	zone    string
	changes []Change
	apply   ApplyFunc
}

// NewChangeset returns an empty changeset for the named zone whose Apply
// calls apply. It is for providers.
func NewChangeset(zone string, apply ApplyFunc) *Changeset {
	return &Changeset{zone: zone, apply: apply}
}

// Add queues the creation of rs.
func (c *Changeset) Add(rs RecordSet) *Changeset { return c.queue(Add, rs) }

// Remove queues the deletion of the record set of rs's name and type.
func (c *Changeset) Remove(rs RecordSet) *Changeset { return c.queue(Remove, rs) }

// Upsert queues making the record set of rs's name and type equal to rs.
func (c *Changeset) Upsert(rs RecordSet) *Changeset { return c.queue(Upsert, rs) }

func (c *Changeset) queue(op Op, rs RecordSet) *Changeset {
	rs.Name = CanonicalName(rs.Name)
	c.changes = append(c.changes, Change{Op: op, RecordSet: rs})
	return c
}

// Changes returns the queued changes in order.
func (c *Changeset) Changes() []Change { return c.changes }

// IsEmpty reports whether no change is queued.
func (c *Changeset) IsEmpty() bool { return len(c.changes) == 0 }

// Apply validates the queued changes and applies them. An empty changeset
// does nothing.
func (c *Changeset) Apply(ctx context.Context) error {
	if c.IsEmpty() {
		return nil
	}
	for _, ch := range c.changes {
		if !IsSubDomain(c.zone, ch.RecordSet.Name) {
			return fmt.Errorf("%s %s %s: name is not in zone %s", ch.Op, ch.RecordSet.Name, ch.RecordSet.Type, c.zone)
		}
		if ch.Op == Remove {
			if !ch.RecordSet.Type.Known() {
				return fmt.Errorf("remove %s: unsupported record type %q", ch.RecordSet.Name, string(ch.RecordSet.Type))
			}
			continue
		}
		if err := ch.RecordSet.Validate(); err != nil {
			return fmt.Errorf("%s to zone %s: %w", ch.Op, c.zone, err)
		}
	}
	if err := c.apply(ctx, c.changes); err != nil {
		return fmt.Errorf("applying %d changes to zone %s: %w", len(c.changes), c.zone, err)
	}
	return nil
}

// IsSubDomain reports whether the canonical name is zone or below it.
func IsSubDomain(zone, name string) bool {
	zone, name = CanonicalName(zone), CanonicalName(name)
	return zone == "." || name == zone || len(name) > len(zone) && name[len(name)-len(zone)-1] == '.' && name[len(name)-len(zone):] == zone
}
