package app

import (
	"fmt"
	"net"

	netutils "k8s.io/utils/net"
)

// maxServiceRangeHostBits bounds --service-cluster-ip-range as
// kube-apiserver does: the allocation bitmap is one object in etcd.
const maxServiceRangeHostBits = 20

// serviceClusterIPRange parses --service-cluster-ip-range: one CIDR, of
// 4 to 2^20 addresses (the first is default/kubernetes', the network and,
// for IPv4, broadcast addresses are never handed out).
func (o *Options) serviceClusterIPRange() (*net.IPNet, error) {
	_, cidr, err := netutils.ParseCIDRSloppy(o.ServiceClusterIPRange)
	if err != nil {
		return nil, fmt.Errorf("--service-cluster-ip-range %q: not a CIDR (e.g. 198.18.0.0/16): %w", o.ServiceClusterIPRange, err)
	}
	ones, bits := cidr.Mask.Size()
	if host := bits - ones; host > maxServiceRangeHostBits || host < 2 {
		return nil, fmt.Errorf("--service-cluster-ip-range %s: must have 2 to %d host bits (a /%d to /%d), has %d",
			cidr, maxServiceRangeHostBits, bits-maxServiceRangeHostBits, bits-2, host)
	}
	return cidr, nil
}
