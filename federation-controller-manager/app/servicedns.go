package app

import (
	"context"
	"fmt"

	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/controllers/servicedns"
	"github.com/federation-v1/federation/pkg/dnsprovider/coredns"
	"github.com/federation-v1/federation/pkg/dnsrecords"
)

// startServiceDNS builds the service DNS controller on the coredns provider
// named by --dns-provider-config; without one it does not run.
func startServiceDNS(ctx context.Context, cc *ControllerContext) (func(context.Context) error, error) {
	o := cc.Options
	if o.DNS.ProviderConfig == "" {
		klog.FromContext(ctx).Info("Controller not configured: no --dns-provider-config", "controller", servicedns.Name)
		return nil, nil
	}
	cfg, zoneName, err := readDNSProviderConfig(o.DNS)
	if err != nil {
		return nil, err
	}
	provider, err := coredns.NewFromConfig(cfg)
	if err != nil {
		return nil, err
	}
	zone, err := provider.Zone(ctx, zoneName)
	if err != nil {
		provider.Close()
		return nil, fmt.Errorf("DNS zone %q of %s: %w", zoneName, o.DNS.ProviderConfig, err)
	}
	c, err := servicedns.New(zone, cc.KubeInformers.Core().V1().Services(), cc.FedInformers.Federation().V1beta1().Clusters(), cc.Recorder,
		servicedns.Options{
			Records: dnsrecords.Config{Federation: o.FederationName, Domain: zoneName, TTL: o.DNS.TTL}, Workers: 4,
			NeverPropagatedNamespaces: o.Propagation.NeverPropagatedNamespaces,
		})
	if err != nil {
		provider.Close()
		return nil, err
	}
	return func(ctx context.Context) error {
		defer provider.Close()
		return c.Run(ctx)
	}, nil
}
