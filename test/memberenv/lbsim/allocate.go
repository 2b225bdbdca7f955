package lbsim

import (
	"fmt"
	"net/netip"
)

// allocate returns the lowest address of pool, past the network address,
// that is not in used.
func allocate(pool netip.Prefix, used map[netip.Addr]bool) (netip.Addr, error) {
	pool = pool.Masked()
	for a := pool.Addr().Next(); pool.Contains(a); a = a.Next() {
		if !pool.Contains(a.Next()) { // keep the broadcast address free
			break
		}
		if !used[a] {
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("load-balancer pool %s is exhausted", pool)
}
