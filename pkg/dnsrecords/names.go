package dnsrecords

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/dnsprovider"
)

// DNS limits of RFC 1035: a label is at most 63 octets, a name at most 253
// characters written without its final dot.
const (
	maxLabel = 63
	maxName  = 253
)

// names builds the DNS names of one service.
type names struct {
	// base is "<service>.<namespace>.<federation>.svc", lower case.
	base string
	// domain is the zone name, canonical ("example.com.").
	domain string
	// service is "<namespace>/<name>", for errors.
	service string
}

func newNames(federation, domain string, svc Service) names {
	return names{
		base:    strings.ToLower(strings.Join([]string{svc.Name, svc.Namespace, federation, "svc"}, ".")),
		domain:  dnsprovider.CanonicalName(domain),
		service: svc.Namespace + "/" + svc.Name,
	}
}

// global is "nginx.default.fed.svc.example.com.".
func (n names) global() (string, error) { return n.build() }

// region is "nginx.default.fed.svc.us-east1.example.com.".
func (n names) region(region string) (string, error) { return n.build(region) }

// zone is "nginx.default.fed.svc.us-east1-b.us-east1.example.com.".
func (n names) zone(zone, region string) (string, error) { return n.build(zone, region) }

// build joins base, the middle labels and the domain, and checks the result
// against the DNS limits.
func (n names) build(middle ...string) (string, error) {
	labels := []string{n.base}
	for _, m := range middle {
		if !isLabel(m) {
			return "", fmt.Errorf("service %s: %q is not a single DNS label (zone or region)", n.service, m)
		}
		labels = append(labels, strings.ToLower(m))
	}
	name := strings.Join(labels, ".") + "." + n.domain
	for _, l := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		if l == "" {
			return "", fmt.Errorf("service %s: DNS name %q has an empty label", n.service, name)
		}
		if len(l) > maxLabel {
			return "", fmt.Errorf("service %s: label %q of DNS name %s is %d characters long, more than %d", n.service, l, name, len(l), maxLabel)
		}
	}
	if len(name)-1 > maxName {
		return "", fmt.Errorf("service %s: DNS name %s is %d characters long, more than %d", n.service, name, len(name)-1, maxName)
	}
	return name, nil
}

// owns reports whether name is one of this service's names: the global name,
// or base followed by one (region) or two (zone, region) labels and the domain.
func (n names) owns(name string) bool {
	rest, ok := strings.CutPrefix(dnsprovider.CanonicalName(name), n.base+".")
	if !ok {
		return false
	}
	if rest == n.domain {
		return true
	}
	middle, ok := strings.CutSuffix(rest, "."+n.domain)
	if !ok || middle == "" {
		return false
	}
	labels := strings.Split(middle, ".")
	return len(labels) <= 2 && !slices.Contains(labels, "")
}

// isLabel reports whether a zone or region, in lower case, is a DNS-1123
// label.
func isLabel(s string) bool {
	return len(validation.IsDNS1123Label(strings.ToLower(s))) == 0
}

// withLabelsOnly returns c with the zones and region that are not DNS-1123
// labels left out, and logs them. The apiserver refuses them in a Cluster's
// status, but one written before that check, or straight to etcd, must
// never make a name elsewhere in the zone: a "." adds a level, a "/" is a
// separator of the provider's keys and a "*" a wildcard. Without a usable
// region the cluster counts for the global name only.
func withLabelsOnly(ctx context.Context, svc Service, c Cluster) Cluster {
	logger := klog.FromContext(ctx)
	if c.Region != "" && !isLabel(c.Region) {
		logger.V(2).Info("Skipping a cluster's region that is not a DNS label", "service", svc.Namespace+"/"+svc.Name, "cluster", c.Name, "region", c.Region)
		c.Region = ""
	}
	if c.Region == "" {
		c.Zones = nil
		return c
	}
	var zones []string
	for _, z := range c.Zones {
		if !isLabel(z) {
			logger.V(2).Info("Skipping a cluster's zone that is not a DNS label", "service", svc.Namespace+"/"+svc.Name, "cluster", c.Name, "zone", z)
			continue
		}
		zones = append(zones, z)
	}
	c.Zones = zones
	return c
}
