package dnsrecords

import (
	"fmt"
	"slices"
	"strings"

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
		if m == "" || strings.Contains(m, ".") {
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
