package storage

import (
	"context"
	"errors"
	"fmt"
	"net"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/klog/v2"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/registry/core/service/ipallocator"
	netutils "k8s.io/utils/net"
)

// clusterIPs gives federated Services their virtual cluster IP from the
// federation's range, as kube-apiserver's Service REST does with the same
// allocator (single-stack: the federation has one range). The address is
// the federation's own: copies never carry it (federatedtypes' pruneService)
// and each member allocates its own.
type clusterIPs struct {
	alloc ipallocator.Interface
}

// needsClusterIP reports whether a Service gets a cluster IP: not headless,
// not ExternalName.
func needsClusterIP(svc *api.Service) bool {
	return svc.Spec.Type != api.ServiceTypeExternalName && svc.Spec.ClusterIP != api.ClusterIPNone
}

// noop is the finish of a write that allocated nothing.
func noop(context.Context, bool) {}

// beginCreate allocates the cluster IP a new Service asks for, or the next
// free one; the finish releases it if the Service is not stored.
func (c clusterIPs) beginCreate(ctx context.Context, svc *api.Service, dryRun bool) (genericregistry.FinishFunc, error) {
	if !needsClusterIP(svc) {
		return noop, nil
	}
	return c.allocate(ctx, svc, dryRun)
}

// beginUpdate keeps a Service's cluster IP when the update leaves it out
// (a PUT of the manifest, as kube-apiserver does), allocates one to a
// Service that now needs it (from ExternalName, or stored before the
// federation had a range) and, once stored, releases the one a Service no
// longer needs (to ExternalName).
func (c clusterIPs) beginUpdate(ctx context.Context, svc, old *api.Service, dryRun bool) (genericregistry.FinishFunc, error) {
	if needsClusterIP(svc) && needsClusterIP(old) && len(old.Spec.ClusterIPs) > 0 {
		keepAllocated(svc, old)
		return noop, nil
	}
	if needsClusterIP(svc) {
		return c.allocate(ctx, svc, dryRun)
	}
	if needsClusterIP(old) && !dryRun {
		released := old.Spec.ClusterIPs
		return func(ctx context.Context, success bool) {
			if success {
				c.release(ctx, svc, released)
			}
		}, nil
	}
	return noop, nil
}

// afterDelete releases a deleted Service's cluster IP.
func (c clusterIPs) afterDelete(obj runtime.Object, options *metav1.DeleteOptions) {
	svc, ok := obj.(*api.Service)
	if !ok || !needsClusterIP(svc) || options != nil && len(options.DryRun) > 0 {
		return
	}
	c.release(context.Background(), svc, svc.Spec.ClusterIPs)
}

// keepAllocated fills in what an update left out of the allocated fields.
func keepAllocated(svc, old *api.Service) {
	if svc.Spec.ClusterIP == "" {
		svc.Spec.ClusterIP = old.Spec.ClusterIP
	}
	if len(svc.Spec.ClusterIPs) == 0 {
		svc.Spec.ClusterIPs = old.Spec.ClusterIPs
	}
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = old.Spec.IPFamilies
	}
	if svc.Spec.IPFamilyPolicy == nil {
		svc.Spec.IPFamilyPolicy = old.Spec.IPFamilyPolicy
	}
}

// allocate gives svc the cluster IP it names, which must lie in the range
// and be free, or the next free one, with the range's IP family.
func (c clusterIPs) allocate(ctx context.Context, svc *api.Service, dryRun bool) (genericregistry.FinishFunc, error) {
	if errs := c.singleStack(svc); len(errs) > 0 {
		return nil, apierrors.NewInvalid(api.Kind("Service"), svc.Name, errs)
	}
	alloc := c.alloc
	if dryRun {
		alloc = alloc.DryRun()
	}
	var ip net.IP
	if len(svc.Spec.ClusterIPs) > 0 {
		path := field.NewPath("spec", "clusterIPs").Index(0)
		if ip = netutils.ParseIPSloppy(svc.Spec.ClusterIPs[0]); ip == nil {
			return nil, apierrors.NewInvalid(api.Kind("Service"), svc.Name, field.ErrorList{
				field.Invalid(path, svc.Spec.ClusterIPs[0], "must be a valid IP address or \"None\"")})
		}
		if err := alloc.Allocate(ip); err != nil {
			var notInRange *ipallocator.ErrNotInRange
			if errors.As(err, &notInRange) || errors.Is(err, ipallocator.ErrAllocated) {
				return nil, apierrors.NewInvalid(api.Kind("Service"), svc.Name, field.ErrorList{
					field.Invalid(path, svc.Spec.ClusterIPs[0], fmt.Sprintf("failed to allocate IP %s from the federation's service range: %v", ip, err))})
			}
			return nil, apierrors.NewInternalError(fmt.Errorf("failed to allocate IP %s: %w", ip, err))
		}
	} else {
		var err error
		if ip, err = alloc.AllocateNext(); err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("failed to allocate a cluster IP from the federation's service range %s: %w", c.cidr(), err))
		}
	}
	svc.Spec.ClusterIP = ip.String()
	svc.Spec.ClusterIPs = []string{ip.String()}
	svc.Spec.IPFamilies = []api.IPFamily{alloc.IPFamily()}
	if svc.Spec.IPFamilyPolicy == nil {
		single := api.IPFamilyPolicySingleStack
		svc.Spec.IPFamilyPolicy = &single
	}
	if dryRun {
		return noop, nil
	}
	return func(ctx context.Context, success bool) {
		if !success {
			c.release(ctx, svc, []string{ip.String()})
		}
	}, nil
}

// singleStack refuses what the federation's one range cannot give: two
// addresses, another IP family, dual-stack required.
func (c clusterIPs) singleStack(svc *api.Service) field.ErrorList {
	var errs field.ErrorList
	family := c.alloc.IPFamily()
	if p := svc.Spec.IPFamilyPolicy; p != nil && *p == api.IPFamilyPolicyRequireDualStack {
		errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), *p,
			fmt.Sprintf("the federation's service range %s is single-stack", c.cidr())))
	}
	if len(svc.Spec.IPFamilies) > 0 && svc.Spec.IPFamilies[0] != family {
		errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilies").Index(0), svc.Spec.IPFamilies[0],
			fmt.Sprintf("the federation's service range %s is %s", c.cidr(), family)))
	}
	if len(svc.Spec.ClusterIPs) > 1 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "clusterIPs").Index(1), svc.Spec.ClusterIPs[1],
			fmt.Sprintf("the federation's service range %s is single-stack", c.cidr())))
	}
	return errs
}

// release gives addresses back; one outside the range (a Service stored
// before the range changed) is ignored by the allocator. A failure is
// logged: the repair loop (RunRepair) reclaims what leaks.
func (c clusterIPs) release(ctx context.Context, svc *api.Service, ips []string) {
	for _, s := range ips {
		ip := netutils.ParseIPSloppy(s)
		if ip == nil {
			continue
		}
		if err := c.alloc.Release(ip); err != nil {
			klog.FromContext(ctx).Error(err, "Releasing a cluster IP", "service", klog.KObj(svc), "ip", s)
		}
	}
}

func (c clusterIPs) cidr() string {
	cidr := c.alloc.CIDR()
	return cidr.String()
}
