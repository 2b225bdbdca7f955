package storage

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/registry/core/service/ipallocator"
	netutils "k8s.io/utils/net"
)

func newClusterIPs(t *testing.T, cidr string) clusterIPs {
	t.Helper()
	_, n, err := netutils.ParseCIDRSloppy(cidr)
	require.NoError(t, err)
	alloc, err := ipallocator.NewInMemory(n)
	require.NoError(t, err)
	return clusterIPs{alloc: alloc}
}

func service(typ api.ServiceType, clusterIP string) *api.Service {
	svc := &api.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}, Spec: api.ServiceSpec{Type: typ, ClusterIP: clusterIP}}
	syncClusterIPs(svc)
	return svc
}

func TestClusterIPsAreAllocatedOnceAndReleased(t *testing.T) {
	ctx := context.Background()
	c := newClusterIPs(t, "198.18.0.0/29") // 6 usable addresses
	seen := map[string]bool{}
	var svcs []*api.Service
	for _, typ := range []api.ServiceType{api.ServiceTypeClusterIP, api.ServiceTypeNodePort, api.ServiceTypeLoadBalancer} {
		svc := service(typ, "")
		finish, err := c.beginCreate(ctx, svc, false)
		require.NoError(t, err, typ)
		finish(ctx, true)
		require.Len(t, svc.Spec.ClusterIPs, 1)
		assert.Equal(t, svc.Spec.ClusterIP, svc.Spec.ClusterIPs[0])
		assert.Equal(t, []api.IPFamily{api.IPv4Protocol}, svc.Spec.IPFamilies)
		assert.Equal(t, api.IPFamilyPolicySingleStack, *svc.Spec.IPFamilyPolicy)
		assert.True(t, strings.HasPrefix(svc.Spec.ClusterIP, "198.18.0."), svc.Spec.ClusterIP)
		assert.False(t, seen[svc.Spec.ClusterIP], "%s handed out twice", svc.Spec.ClusterIP)
		seen[svc.Spec.ClusterIP] = true
		svcs = append(svcs, svc)
	}

	// Headless and ExternalName get none.
	for _, svc := range []*api.Service{service(api.ServiceTypeClusterIP, api.ClusterIPNone), service(api.ServiceTypeExternalName, "")} {
		_, err := c.beginCreate(ctx, svc, false)
		require.NoError(t, err)
		assert.NotEqual(t, "198.18", svc.Spec.ClusterIP[:min(6, len(svc.Spec.ClusterIP))])
	}

	// A create that fails gives its address back; a dry run takes none.
	failed := service(api.ServiceTypeClusterIP, "")
	finish, err := c.beginCreate(ctx, failed, false)
	require.NoError(t, err)
	finish(ctx, false)
	assert.False(t, c.alloc.Has(netutils.ParseIPSloppy(failed.Spec.ClusterIP)), "released after the failed create")
	dry := service(api.ServiceTypeClusterIP, "")
	_, err = c.beginCreate(ctx, dry, true)
	require.NoError(t, err)
	assert.NotEmpty(t, dry.Spec.ClusterIP)
	assert.False(t, c.alloc.Has(netutils.ParseIPSloppy(dry.Spec.ClusterIP)), "a dry run allocates nothing")

	// Deletion releases.
	c.afterDelete(svcs[0], &metav1.DeleteOptions{})
	assert.False(t, c.alloc.Has(netutils.ParseIPSloppy(svcs[0].Spec.ClusterIP)))
	assert.True(t, c.alloc.Has(netutils.ParseIPSloppy(svcs[1].Spec.ClusterIP)))
}

func TestAGivenClusterIPIsHonouredInTheRangeOnly(t *testing.T) {
	ctx := context.Background()
	c := newClusterIPs(t, "198.18.0.0/24")
	mine := service(api.ServiceTypeClusterIP, "198.18.0.42")
	_, err := c.beginCreate(ctx, mine, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"198.18.0.42"}, mine.Spec.ClusterIPs)

	for _, tc := range []struct {
		name string
		svc  *api.Service
		want string
	}{
		{"taken", service(api.ServiceTypeClusterIP, "198.18.0.42"), "spec.clusterIPs[0]: Invalid value: \"198.18.0.42\": failed to allocate IP 198.18.0.42 from the federation's service range: provided IP is already allocated"},
		{"a member's range", service(api.ServiceTypeClusterIP, "10.96.0.10"), "spec.clusterIPs[0]: Invalid value: \"10.96.0.10\": failed to allocate IP 10.96.0.10 from the federation's service range: the provided IP (10.96.0.10) is not in the valid range. The range of valid IPs is 198.18.0.0/24"},
		{"not an IP", service(api.ServiceTypeClusterIP, "web"), "spec.clusterIPs[0]: Invalid value: \"web\": must be a valid IP address"},
		{"IPv6", func() *api.Service {
			s := service(api.ServiceTypeClusterIP, "")
			s.Spec.IPFamilies = []api.IPFamily{api.IPv6Protocol}
			return s
		}(), "spec.ipFamilies[0]: Invalid value: \"IPv6\": the federation's service range 198.18.0.0/24 is IPv4"},
		{"dual-stack required", func() *api.Service {
			s := service(api.ServiceTypeClusterIP, "")
			p := api.IPFamilyPolicyRequireDualStack
			s.Spec.IPFamilyPolicy = &p
			return s
		}(), "spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": the federation's service range 198.18.0.0/24 is single-stack"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.beginCreate(ctx, tc.svc, false)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestUpdatesKeepAllocateAndRelease(t *testing.T) {
	ctx := context.Background()
	c := newClusterIPs(t, "198.18.0.0/24")
	old := service(api.ServiceTypeClusterIP, "")
	_, err := c.beginCreate(ctx, old, false)
	require.NoError(t, err)

	// A PUT of the manifest, without the address: it is kept.
	put := service(api.ServiceTypeLoadBalancer, "")
	_, err = c.beginUpdate(ctx, put, old, false)
	require.NoError(t, err)
	assert.Equal(t, old.Spec.ClusterIPs, put.Spec.ClusterIPs)
	assert.Equal(t, old.Spec.IPFamilies, put.Spec.IPFamilies)

	// To ExternalName: released once stored.
	external := service(api.ServiceTypeExternalName, "")
	finish, err := c.beginUpdate(ctx, external, old, false)
	require.NoError(t, err)
	assert.True(t, c.alloc.Has(netutils.ParseIPSloppy(old.Spec.ClusterIP)), "kept until the update is stored")
	finish(ctx, true)
	assert.False(t, c.alloc.Has(netutils.ParseIPSloppy(old.Spec.ClusterIP)))

	// Back from ExternalName, or stored before the federation had a range:
	// allocated.
	for _, before := range []*api.Service{external, service(api.ServiceTypeClusterIP, "")} {
		back := service(api.ServiceTypeClusterIP, "")
		_, err = c.beginUpdate(ctx, back, before, false)
		require.NoError(t, err)
		require.Len(t, back.Spec.ClusterIPs, 1)
		assert.True(t, c.alloc.Has(netutils.ParseIPSloppy(back.Spec.ClusterIP)))
	}
}
