// Package clusterhealth observes a member cluster the way Federation v1's
// cluster controller did, with today's endpoints: is its API reachable and
// ready (/readyz), and which zones and region do its nodes carry. A Tracker
// turns a run of observations into a verdict that one lost probe does not flip.
package clusterhealth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/apis/federation/validation"
)

// Node labels that carry topology: today's, then the ones v1 read.
var (
	zoneLabels   = []string{"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}
	regionLabels = []string{"topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region"}
)

// nodePageSize bounds each list call, so a large member costs several small
// responses rather than one huge one.
const nodePageSize = 500

// Observation is the result of one probe.
type Observation struct {
	// Reachable: the API server answered at all.
	Reachable bool
	// Healthy: it answered /readyz with ok.
	Healthy bool
	// Message says what failed, for the condition's message. It is in words
	// of our own: never bytes of the member's answer.
	Message string
	// Reason, when set, is the Ready condition's reason for a probe that
	// could not run (say the credentials were refused).
	Reason string
	// Zones are the distinct zone labels of the nodes, sorted.
	Zones []string
	// Region is the most common region label of the nodes.
	Region string
}

// Probe asks the member at config for /readyz and, when healthy, lists its
// nodes' metadata (labels only) for zones and region. It never takes longer
// than timeout. What the member answers is never quoted in the
// observation's message, which ends up in the Cluster's status and events
// for anyone who may read Clusters; the error itself is logged at -v=4.
func Probe(ctx context.Context, config *rest.Config, timeout time.Duration) Observation {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	config = rest.CopyConfig(config)
	config.Timeout = timeout
	logger := klog.FromContext(ctx).WithValues("server", config.Host)

	client, err := rest.UnversionedRESTClientFor(withCodecs(config))
	if err != nil {
		return Observation{Message: fmt.Sprintf("building a client: %v", err)}
	}
	var status int
	body, err := client.Get().AbsPath("/readyz").Do(ctx).StatusCode(&status).Raw()
	var apiStatus apierrors.APIStatus
	if status == 0 && errors.As(err, &apiStatus) {
		// client-go leaves the code out of the result of an error answered
		// in plain text, as /readyz does; the error still has it.
		status = int(apiStatus.Status().Code)
	}
	if err != nil {
		logger.V(4).Info("Probing /readyz failed", "status", status, "err", err)
	}
	switch {
	case err != nil && status == 0:
		return Observation{Message: "API server unreachable: " + describe(err)}
	case status != http.StatusOK:
		return Observation{Reachable: true, Message: "/readyz answered " + httpStatus(status)}
	case err != nil:
		return Observation{Reachable: true, Message: "reading the answer of /readyz: " + describe(err)}
	case string(body) != "ok":
		return Observation{Reachable: true, Message: "/readyz answered HTTP 200 without ok"}
	}
	obs := Observation{Reachable: true, Healthy: true}
	obs.Zones, obs.Region, err = topology(ctx, config)
	if err != nil {
		// Healthy but its nodes cannot be read: keep it usable, and say why
		// zones are missing.
		logger.V(4).Info("Reading node topology failed", "err", err)
		obs.Message = "reading node topology: " + describe(err)
	}
	return obs
}

// describe says what went wrong in words of our own: the errors of the
// HTTP stack may quote the member's answer (a Status message, a malformed
// response, a redirect's Location), and a hostile member must not write
// into the Cluster's status or events through them.
func describe(err error) string {
	var (
		status      apierrors.APIStatus
		dnsErr      *net.DNSError
		authority   x509.UnknownAuthorityError
		hostname    x509.HostnameError
		invalid     x509.CertificateInvalidError
		header      tls.RecordHeaderError
		alert       tls.AlertError
		netErr      net.Error
		invalidText = map[x509.InvalidReason]string{x509.Expired: "expired or not yet valid"}
	)
	switch {
	case errors.As(err, &status):
		return "answered " + httpStatus(int(status.Status().Code))
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH):
		return "no route to host"
	case errors.As(err, &dnsErr):
		return "the host name could not be resolved"
	case errors.As(err, &authority):
		return "its certificate is not signed by the CA of the credentials Secret"
	case errors.As(err, &hostname):
		return "its certificate is not valid for the host of serverAddress"
	case errors.As(err, &invalid):
		if text, ok := invalidText[invalid.Reason]; ok {
			return "its certificate is " + text
		}
		return "its certificate is not valid"
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return "it answered plain HTTP, not HTTPS"
	case errors.As(err, &header):
		return "it does not speak TLS"
	case errors.As(err, &alert):
		return "the TLS handshake failed"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was closed"
	}
	return "the request failed (the controller manager logs why at -v=4)"
}

// httpStatus is "HTTP 503 (Service Unavailable)".
func httpStatus(code int) string {
	if code < 100 || code > 599 {
		return "an invalid HTTP status"
	}
	if text := http.StatusText(code); text != "" {
		return fmt.Sprintf("HTTP %d (%s)", code, text)
	}
	return fmt.Sprintf("HTTP %d", code)
}

// topology pages through the nodes' metadata.
func topology(ctx context.Context, config *rest.Config) ([]string, string, error) {
	client, err := metadata.NewForConfig(config)
	if err != nil {
		return nil, "", err
	}
	nodes := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "nodes"})
	zones := map[string]bool{}
	regions := map[string]int{}
	opts := metav1.ListOptions{Limit: nodePageSize}
	for {
		page, err := nodes.List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		for _, n := range page.Items {
			if z := firstLabel(ctx, n.Labels, zoneLabels); z != "" {
				zones[z] = true
			}
			if r := firstLabel(ctx, n.Labels, regionLabels); r != "" {
				regions[r]++
			}
		}
		if opts.Continue = page.Continue; opts.Continue == "" {
			break
		}
	}
	sorted := sortedKeys(zones)
	if len(sorted) > validation.MaxZones {
		klog.FromContext(ctx).V(2).Info("Keeping the first zones only", "zones", len(sorted), "kept", validation.MaxZones)
		sorted = sorted[:validation.MaxZones]
	}
	return sorted, mostCommon(regions), nil
}

// firstLabel returns the first of keys that labels has, in lower case. A
// value that is not a DNS-1123 label is skipped: zones and region become
// labels of the Services' DNS names, and the Cluster's status refuses them.
func firstLabel(ctx context.Context, labels map[string]string, keys []string) string {
	for _, k := range keys {
		v := strings.ToLower(labels[k])
		if v == "" {
			continue
		}
		if len(utilvalidation.IsDNS1123Label(v)) > 0 {
			klog.FromContext(ctx).V(2).Info("Skipping a node topology label that is not a DNS label", "label", k, "value", v)
			continue
		}
		return v
	}
	return ""
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// mostCommon returns the key with the highest count, the smallest name on a tie.
func mostCommon(counts map[string]int) string {
	best := ""
	for k, n := range counts {
		if best == "" || n > counts[best] || (n == counts[best] && k < best) {
			best = k
		}
	}
	return best
}
