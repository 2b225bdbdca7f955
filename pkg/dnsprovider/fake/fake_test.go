package fake

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/dnsprovider"
)

func TestZone(t *testing.T) {
	ctx := context.Background()
	p := New("example.com", "example.org.")
	zones, err := p.Zones(ctx)
	require.NoError(t, err)
	require.Len(t, zones, 2)
	assert.Equal(t, "example.com.", zones[0].Name())
	_, err = p.Zone(ctx, "example.net.")
	assert.ErrorIs(t, err, dnsprovider.ErrZoneNotFound)

	z, err := p.Zone(ctx, "example.com.")
	require.NoError(t, err)
	www := dnsprovider.RecordSet{Name: "www.example.com.", Type: dnsprovider.A, TTL: 180, Rrdatas: []string{"10.0.0.2", "10.0.0.1"}}
	require.NoError(t, z.StartChangeset().Add(www).Apply(ctx))
	assert.ErrorIs(t, z.StartChangeset().Add(www).Apply(ctx), dnsprovider.ErrRecordSetExists)

	got, err := z.Get(ctx, "WWW.example.com")
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, []string{"10.0.0.1", "10.0.0.2"}, got[0].Rrdatas, "rrdatas come back sorted")

	// A failing changeset changes nothing.
	err = z.StartChangeset().
		Remove(www).
		Add(dnsprovider.RecordSet{Name: "new.example.com.", Type: dnsprovider.A, TTL: 180, Rrdatas: []string{"10.0.0.3"}}).
		Add(www).Add(www).
		Apply(ctx)
	assert.ErrorIs(t, err, dnsprovider.ErrRecordSetExists)
	all, err := z.List(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 1)
	assert.Len(t, z.(*Zone).Applied(), 1)

	require.NoError(t, z.StartChangeset().Remove(www).Apply(ctx))
	all, err = z.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, all)
}
