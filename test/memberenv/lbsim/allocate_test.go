package lbsim

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAllocate(t *testing.T) {
	pool := netip.MustParsePrefix("127.1.3.0/30") // .1 and .2 are usable
	addr := netip.MustParseAddr

	tests := []struct {
		name string
		used []string
		want string
		err  bool
	}{
		{name: "empty pool gives the first host address", want: "127.1.3.1"},
		{name: "skips used addresses", used: []string{"127.1.3.1"}, want: "127.1.3.2"},
		{name: "reuses a freed lower address", used: []string{"127.1.3.2"}, want: "127.1.3.1"},
		{name: "exhausted", used: []string{"127.1.3.1", "127.1.3.2"}, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			used := map[netip.Addr]bool{}
			for _, u := range tt.used {
				used[addr(u)] = true
			}
			got, err := allocate(pool, used)
			if tt.err {
				require.ErrorContains(t, err, "exhausted")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.String())
		})
	}
}
