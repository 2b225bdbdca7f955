package app

import (
	"context"
	"fmt"
	"os"
	"strings"

	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/controllers/dnspublisher"
	"github.com/federation-v1/federation/pkg/dnsprovider/coredns"
)

// startDNSPublisher builds the controller that publishes the federation's
// DNS zone and server for kubefed join: the zone of the service DNS
// records, and the provider config's coredns-endpoints, the values
// kubefed init --local publishes. Without a provider config, or one
// naming no CoreDNS server, it does not run.
func startDNSPublisher(ctx context.Context, cc *ControllerContext) (func(context.Context) error, error) {
	o := cc.Options
	if o.DNS.ProviderConfig == "" {
		klog.FromContext(ctx).Info("Controller not configured: no --dns-provider-config", "controller", dnspublisher.Name)
		return nil, nil
	}
	cfg, zone, err := readDNSProviderConfig(o.DNS)
	if err != nil {
		return nil, err
	}
	servers := cfg.CoreDNSEndpoints()
	if len(servers) == 0 {
		klog.FromContext(ctx).Info("Controller not configured: no coredns-endpoints in --dns-provider-config",
			"controller", dnspublisher.Name, "config", o.DNS.ProviderConfig)
		return nil, nil
	}
	c, err := dnspublisher.New(cc.KubeClient, dnspublisher.Settings{
		Zone: strings.TrimSuffix(zone, ".") + ".",
		// A CoreDNS forward takes its targets separated by spaces.
		Server: strings.Join(servers, " "),
	})
	if err != nil {
		return nil, err
	}
	return c.Run, nil
}

// readDNSProviderConfig reads --dns-provider-config and returns it with the
// federation's zone: --dns-zone-name, else the config's first zone.
func readDNSProviderConfig(o DNSOptions) (*coredns.Config, string, error) {
	f, err := os.Open(o.ProviderConfig)
	if err != nil {
		return nil, "", fmt.Errorf("--dns-provider-config: %w", err)
	}
	defer f.Close()
	cfg, err := coredns.ParseConfig(f)
	if err != nil {
		return nil, "", fmt.Errorf("--dns-provider-config %s: %w", o.ProviderConfig, err)
	}
	zone := o.ZoneName
	if zone == "" && len(cfg.Zones()) > 0 {
		zone = cfg.Zones()[0]
	}
	if zone == "" {
		return nil, "", fmt.Errorf("--dns-zone-name: no zone given, and --dns-provider-config %s names none", o.ProviderConfig)
	}
	return cfg, zone, nil
}
