package dnsprovider

import (
	"fmt"
	"net/netip"
	"slices"
)

// RecordType is the DNS type of a record set.
type RecordType string

// The record types the federation writes.
const (
	A     RecordType = "A"
	AAAA  RecordType = "AAAA"
	CNAME RecordType = "CNAME"
)

// DefaultTTL is the TTL in seconds of the federation's records, as in v1.
const DefaultTTL int64 = 180

// RecordSet is the records of one name and type: addresses for A and AAAA,
// a single target name for CNAME.
type RecordSet struct {
	// Name is the canonical owner name, e.g. "nginx.default.fed.svc.example.com.".
	Name string
	// Type is the record type.
	Type RecordType
	// TTL in seconds.
	TTL int64
	// Rrdatas are the record data: IP addresses or one target name.
	Rrdatas []string
}

// Validate checks that the record set is well formed: a name, a known type,
// at least one rrdata of the right form (one for CNAME), a TTL that fits.
func (rs RecordSet) Validate() error {
	if rs.Name == "" || rs.Name == "." {
		return fmt.Errorf("record set of type %s has no name", rs.Type)
	}
	if rs.TTL < 0 || rs.TTL > 1<<31-1 {
		return fmt.Errorf("record set %s %s: TTL %d is out of range", rs.Name, rs.Type, rs.TTL)
	}
	if len(rs.Rrdatas) == 0 {
		return fmt.Errorf("record set %s %s has no rrdatas", rs.Name, rs.Type)
	}
	for _, d := range rs.Rrdatas {
		if err := rs.Type.checkRrdata(d); err != nil {
			return fmt.Errorf("record set %s %s: %w", rs.Name, rs.Type, err)
		}
	}
	if rs.Type == CNAME && len(rs.Rrdatas) != 1 {
		return fmt.Errorf("record set %s CNAME has %d targets, want one", rs.Name, len(rs.Rrdatas))
	}
	return nil
}

// Known reports whether t is one of the supported record types.
func (t RecordType) Known() bool { return t == A || t == AAAA || t == CNAME }

func (t RecordType) checkRrdata(d string) error {
	switch t {
	case A, AAAA:
		ip, err := netip.ParseAddr(d)
		if err != nil {
			return fmt.Errorf("rrdata %q is not an IP address: %w", d, err)
		}
		if ip.Is4() != (t == A) {
			return fmt.Errorf("rrdata %q is not an address of type %s", d, t)
		}
	case CNAME:
		if _, err := netip.ParseAddr(d); err == nil || d == "" {
			return fmt.Errorf("rrdata %q is not a host name", d)
		}
	default:
		return fmt.Errorf("unsupported record type %q", string(t))
	}
	return nil
}

// Equal reports whether two record sets have the same name, type, TTL and
// rrdatas, in any order.
func (rs RecordSet) Equal(other RecordSet) bool {
	if rs.Name != other.Name || rs.Type != other.Type || rs.TTL != other.TTL || len(rs.Rrdatas) != len(other.Rrdatas) {
		return false
	}
	a, b := slices.Clone(rs.Rrdatas), slices.Clone(other.Rrdatas)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// Compare orders record sets by name, then type, for sorted listings.
func Compare(a, b RecordSet) int {
	if a.Name != b.Name {
		if a.Name < b.Name {
			return -1
		}
		return 1
	}
	switch {
	case a.Type < b.Type:
		return -1
	case a.Type > b.Type:
		return 1
	}
	return 0
}
