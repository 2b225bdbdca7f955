package storage

import (
	"context"
	"fmt"
	"net"
	"time"

	"k8s.io/apiserver/pkg/registry/generic"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/registry/core/rangeallocation"
	"k8s.io/kubernetes/pkg/registry/core/service/allocator"
	allocatorstore "k8s.io/kubernetes/pkg/registry/core/service/allocator/storage"
	"k8s.io/kubernetes/pkg/registry/core/service/ipallocator"
	ipcontroller "k8s.io/kubernetes/pkg/registry/core/service/ipallocator/controller"
)

// DefaultClusterIPRange is the federation's service range unless
// --service-cluster-ip-range says otherwise: RFC 2544's benchmarking block,
// which no cluster installer uses for Services (kubeadm's 10.96.0.0/12,
// kube-apiserver's 10.0.0.0/24, EKS's 10.100.0.0/16 and 172.20.0.0/16,
// kops' 100.64.0.0/13, k3s' 10.43.0.0/16), so that a federation's virtual
// address is never mistaken for a member's.
const DefaultClusterIPRange = "198.18.0.0/16"

// rangeKey is where the allocation bitmap is kept, as kube-apiserver keeps
// its own (under the storage prefix).
const rangeKey = "/ranges/serviceips"

// ClusterIPAllocator is the federation's cluster IP allocator, on
// Kubernetes' own bitmap allocator persisted in etcd (kube-apiserver's
// allocator when MultiCIDRServiceAllocator is off): every address handed
// out is recorded in one object updated with compare-and-swap, so two
// apiservers on one etcd never give out the same address.
type ClusterIPAllocator struct {
	ipallocator.Interface
	registry rangeallocation.RangeRegistry
}

// NewClusterIPAllocator returns the allocator of cidr, stored beside the
// Services.
func NewClusterIPAllocator(getter generic.RESTOptionsGetter, cidr *net.IPNet) (*ClusterIPAllocator, error) {
	opts, err := getter.GetRESTOptions(api.Resource("services"), &api.Service{})
	if err != nil {
		return nil, fmt.Errorf("storage options of services: %w", err)
	}
	config := opts.StorageConfig.ForResource(api.Resource("serviceipallocations"))
	a := &ClusterIPAllocator{}
	alloc, err := ipallocator.New(cidr, func(max int, rangeSpec string, offset int) (allocator.Interface, error) {
		etcd, err := allocatorstore.NewEtcd(allocator.NewAllocationMapWithOffset(max, rangeSpec, offset), rangeKey, config)
		if err != nil {
			return nil, err
		}
		a.registry = etcd
		return etcd, nil
	})
	if err != nil {
		return nil, fmt.Errorf("cluster IP allocator of %s: %w", cidr, err)
	}
	a.Interface = alloc
	return a, nil
}

// RepairInterval is how often the repair loop checks the allocations
// against the Services, as kube-apiserver's default.
const RepairInterval = 3 * time.Minute

// RunRepair runs Kubernetes' repair loop of the allocations until ctx is
// done: it creates the allocation record the first time (until then no
// address can be allocated; onFirstSuccess says it is there), records the
// addresses of stored Services, and releases what no Service holds any
// longer (a write that failed half-way).
func (a *ClusterIPAllocator) RunRepair(ctx context.Context, services corev1client.ServicesGetter, events eventsv1client.EventsV1Interface, onFirstSuccess func()) {
	cidr := a.CIDR()
	repair := ipcontroller.NewRepair(RepairInterval, services, events, &cidr, a.registry, nil, nil)
	stop := make(chan struct{})
	go func() {
		<-ctx.Done()
		close(stop)
	}()
	repair.RunUntil(onFirstSuccess, stop)
}
