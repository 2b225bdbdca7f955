package dnsprovider

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCanonicalNameAndIsSubDomain(t *testing.T) {
	assert.Equal(t, "www.example.com.", CanonicalName("WWW.Example.com"))
	assert.Equal(t, "www.example.com.", CanonicalName("www.example.com."))
	for _, tc := range []struct {
		zone, name string
		want       bool
	}{
		{"example.com.", "example.com", true},
		{"example.com.", "a.b.example.com.", true},
		{"example.com", "badexample.com.", false},
		{"example.com.", "example.org.", false},
		{"b.example.com.", "example.com.", false},
		{".", "example.com.", true},
	} {
		assert.Equal(t, tc.want, IsSubDomain(tc.zone, tc.name), "IsSubDomain(%q, %q)", tc.zone, tc.name)
	}
}

func TestRecordSetValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		rs   RecordSet
		want string
	}{
		"A":                 {RecordSet{Name: "a.example.com.", Type: A, TTL: 180, Rrdatas: []string{"10.0.0.1", "10.0.0.2"}}, ""},
		"AAAA":              {RecordSet{Name: "a.example.com.", Type: AAAA, TTL: 180, Rrdatas: []string{"2001:db8::1"}}, ""},
		"CNAME":             {RecordSet{Name: "a.example.com.", Type: CNAME, TTL: 180, Rrdatas: []string{"b.example.com."}}, ""},
		"no name":           {RecordSet{Type: A, Rrdatas: []string{"10.0.0.1"}}, "has no name"},
		"no rrdata":         {RecordSet{Name: "a.example.com.", Type: A}, "has no rrdatas"},
		"IPv6 in A":         {RecordSet{Name: "a.example.com.", Type: A, Rrdatas: []string{"2001:db8::1"}}, "not an address of type A"},
		"name in A":         {RecordSet{Name: "a.example.com.", Type: A, Rrdatas: []string{"b.example.com."}}, "not an IP address"},
		"address in CNAME":  {RecordSet{Name: "a.example.com.", Type: CNAME, Rrdatas: []string{"10.0.0.1"}}, "not a host name"},
		"two CNAME targets": {RecordSet{Name: "a.example.com.", Type: CNAME, Rrdatas: []string{"b.", "c."}}, "want one"},
		"negative TTL":      {RecordSet{Name: "a.example.com.", Type: A, TTL: -1, Rrdatas: []string{"10.0.0.1"}}, "out of range"},
		"unknown type":      {RecordSet{Name: "a.example.com.", Type: "MX", Rrdatas: []string{"10 mx."}}, `unsupported record type "MX"`},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.rs.Validate()
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestRecordSetEqual(t *testing.T) {
	rs := RecordSet{Name: "a.", Type: A, TTL: 180, Rrdatas: []string{"10.0.0.1", "10.0.0.2"}}
	same := RecordSet{Name: "a.", Type: A, TTL: 180, Rrdatas: []string{"10.0.0.2", "10.0.0.1"}}
	assert.True(t, rs.Equal(same))
	assert.Equal(t, []string{"10.0.0.2", "10.0.0.1"}, same.Rrdatas, "Equal does not reorder")
	other := same
	other.TTL = 60
	assert.False(t, rs.Equal(other))
	other = same
	other.Rrdatas = []string{"10.0.0.1"}
	assert.False(t, rs.Equal(other))
}

func TestChangesetApply(t *testing.T) {
	var applied []Change
	apply := func(_ context.Context, changes []Change) error {
		applied = changes
		return nil
	}
	ctx := context.Background()

	require.NoError(t, NewChangeset("example.com.", apply).Apply(ctx))
	assert.Nil(t, applied, "an empty changeset calls nothing")

	cs := NewChangeset("example.com.", apply).
		Remove(RecordSet{Name: "A.example.com", Type: A}).
		Upsert(RecordSet{Name: "a.example.com.", Type: CNAME, TTL: 180, Rrdatas: []string{"b.example.com."}})
	assert.False(t, cs.IsEmpty())
	require.NoError(t, cs.Apply(ctx))
	assert.Equal(t, []Change{
		{Op: Remove, RecordSet: RecordSet{Name: "a.example.com.", Type: A}},
		{Op: Upsert, RecordSet: RecordSet{Name: "a.example.com.", Type: CNAME, TTL: 180, Rrdatas: []string{"b.example.com."}}},
	}, applied)

	applied = nil
	err := NewChangeset("example.com.", apply).Add(RecordSet{Name: "a.example.org.", Type: A, Rrdatas: []string{"10.0.0.1"}}).Apply(ctx)
	assert.ErrorContains(t, err, "a.example.org. A: name is not in zone example.com.")
	err = NewChangeset("example.com.", apply).Add(RecordSet{Name: "a.example.com.", Type: A}).Apply(ctx)
	assert.ErrorContains(t, err, "has no rrdatas")
	err = NewChangeset("example.com.", apply).Remove(RecordSet{Name: "a.example.com.", Type: "TXT"}).Apply(ctx)
	assert.ErrorContains(t, err, `unsupported record type "TXT"`)
	assert.Nil(t, applied, "invalid changesets are not applied")
}
