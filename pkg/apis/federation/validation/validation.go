// Package validation validates federation API objects.
package validation

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// Bounds of what a user may write into a Cluster: every field is read by
// the controller manager and some become DNS names, so none may grow
// without limit.
const (
	// MaxServerAddresses bounds spec.serverAddressByClientCIDRs.
	MaxServerAddresses = 16
	// MaxServerAddressLength bounds each serverAddress.
	MaxServerAddressLength = 2048
	// MaxZones bounds status.zones.
	MaxZones = 64
	// MaxConditions bounds status.conditions (the controller writes two).
	MaxConditions = 8
	// MaxConditionMessageLength bounds a condition's message, as
	// metav1.Condition does.
	MaxConditionMessageLength = 32768
)

// ValidateCluster validates a new Cluster: its metadata (the name is a
// DNS-1035 label) and its spec.
func ValidateCluster(cluster *federationv1beta1.Cluster) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&cluster.ObjectMeta, false, apimachineryvalidation.NameIsDNS1035Label, field.NewPath("metadata"))
	return append(allErrs, ValidateClusterSpec(&cluster.Spec, field.NewPath("spec"))...)
}

// ValidateClusterUpdate validates an update of a Cluster. Unlike v1, the
// spec is validated on update too.
func ValidateClusterUpdate(cluster, old *federationv1beta1.Cluster) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&cluster.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateClusterSpec(&cluster.Spec, field.NewPath("spec"))...)
}

// ValidateClusterStatusUpdate validates an update of a Cluster's status.
func ValidateClusterStatusUpdate(cluster, old *federationv1beta1.Cluster) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&cluster.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateClusterStatus(&cluster.Status, field.NewPath("status"))...)
}

// ValidateClusterSpec requires one to MaxServerAddresses server addresses,
// each with a client CIDR that parses and an https://host[:port] address,
// and a valid Secret name when a secretRef is given.
func ValidateClusterSpec(spec *federationv1beta1.ClusterSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	addrPath := fldPath.Child("serverAddressByClientCIDRs")
	switch n := len(spec.ServerAddressByClientCIDRs); {
	case n == 0:
		allErrs = append(allErrs, field.Required(addrPath, "at least one server address is required"))
	case n > MaxServerAddresses:
		allErrs = append(allErrs, field.TooMany(addrPath, n, MaxServerAddresses))
	}
	for i, addr := range spec.ServerAddressByClientCIDRs {
		idxPath := addrPath.Index(i)
		if addr.ClientCIDR == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("clientCIDR"), ""))
		} else if _, _, err := net.ParseCIDR(addr.ClientCIDR); err != nil {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("clientCIDR"), addr.ClientCIDR, "must be a CIDR such as 0.0.0.0/0"))
		}
		allErrs = append(allErrs, validateServerAddress(addr.ServerAddress, idxPath.Child("serverAddress"))...)
	}
	switch spec.Connection {
	case "", federationv1beta1.ConnectionDirect:
	case federationv1beta1.ConnectionAgent:
		if spec.SecretRef != nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("secretRef"),
				"a cluster reached through its agent (connection: Agent) keeps its credential in the member: the federation stores none"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("connection"), spec.Connection,
			[]string{string(federationv1beta1.ConnectionDirect), string(federationv1beta1.ConnectionAgent)}))
	}
	if spec.SecretRef != nil {
		namePath := fldPath.Child("secretRef", "name")
		if spec.SecretRef.Name == "" {
			allErrs = append(allErrs, field.Required(namePath, ""))
		} else {
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(spec.SecretRef.Name, false) {
				allErrs = append(allErrs, field.Invalid(namePath, spec.SecretRef.Name, msg))
			}
		}
	}
	return allErrs
}

func validateServerAddress(addr string, fldPath *field.Path) field.ErrorList {
	switch {
	case addr == "":
		return field.ErrorList{field.Required(fldPath, "")}
	case len(addr) > MaxServerAddressLength:
		return field.ErrorList{field.TooLong(fldPath, "" /* too long to echo */, MaxServerAddressLength)}
	}
	if err := CheckServerAddress(addr); err != nil {
		return field.ErrorList{field.Invalid(fldPath, addr, err.Error())}
	}
	return nil
}

// CheckServerAddress accepts only https://host[:port]: the member's token
// travels to this address, so it must never go in clear text, and nothing
// but the host and port may come from the user (no path, query, fragment or
// user info). A lone trailing "/" is allowed, as kubeconfigs often have it.
// The controller manager checks stored addresses again with it, for data
// written before this validation existed.
func CheckServerAddress(addr string) error {
	const want = "must be https://host or https://host:port"
	if !strings.HasPrefix(strings.ToLower(addr), "https://") {
		return fmt.Errorf("%s: the scheme must be https (the member's credentials are sent to it)", want)
	}
	u, err := url.Parse(addr)
	if err != nil {
		return fmt.Errorf("%s: does not parse as a URL", want)
	}
	switch {
	case u.Scheme != "https":
		return fmt.Errorf("%s: the scheme must be https (the member's credentials are sent to it)", want)
	case u.Opaque != "" || u.Host == "":
		return fmt.Errorf("%s: no host", want)
	case u.User != nil:
		return fmt.Errorf("%s: no user information", want)
	case (u.Path != "" && u.Path != "/") || u.RawPath != "":
		return fmt.Errorf("%s: no path", want)
	case u.RawQuery != "" || u.ForceQuery || strings.Contains(addr, "?"):
		return fmt.Errorf("%s: no query", want)
	case u.Fragment != "" || strings.Contains(addr, "#"):
		return fmt.Errorf("%s: no fragment", want)
	}
	host := u.Hostname()
	if net.ParseIP(host) == nil && len(utilvalidation.IsDNS1123Subdomain(strings.ToLower(host))) > 0 {
		return fmt.Errorf("%s: host %q is neither an IP address nor a DNS name", want, host)
	}
	if strings.HasPrefix(u.Host, "[") != strings.Contains(host, ":") {
		return fmt.Errorf("%s: an IPv6 address must be in brackets", want)
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%s: port %q is not between 1 and 65535", want, port)
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return fmt.Errorf("%s: empty port", want)
	}
	return nil
}

// ValidateClusterStatus checks that each condition has a type and a status
// of True, False or Unknown, and that zones and region are DNS-1123 labels:
// they become labels of the Services' DNS names. Sizes are bounded.
func ValidateClusterStatus(status *federationv1beta1.ClusterStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	condPath := fldPath.Child("conditions")
	if n := len(status.Conditions); n > MaxConditions {
		allErrs = append(allErrs, field.TooMany(condPath, n, MaxConditions))
	}
	seen := map[federationv1beta1.ClusterConditionType]bool{}
	for i, cond := range status.Conditions {
		idxPath := condPath.Index(i)
		if cond.Type == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("type"), ""))
		} else if seen[cond.Type] {
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("type"), cond.Type))
		}
		seen[cond.Type] = true
		switch cond.Status {
		case "True", "False", "Unknown":
		default:
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("status"), cond.Status, []string{"True", "False", "Unknown"}))
		}
		if len(cond.Message) > MaxConditionMessageLength {
			allErrs = append(allErrs, field.TooLong(idxPath.Child("message"), "", MaxConditionMessageLength))
		}
	}
	zonesPath := fldPath.Child("zones")
	if n := len(status.Zones); n > MaxZones {
		allErrs = append(allErrs, field.TooMany(zonesPath, n, MaxZones))
	}
	for i, z := range status.Zones {
		allErrs = append(allErrs, validateLabel(z, zonesPath.Index(i))...)
	}
	if status.Region != "" {
		allErrs = append(allErrs, validateLabel(status.Region, fldPath.Child("region"))...)
	}
	return allErrs
}

func validateLabel(value string, fldPath *field.Path) field.ErrorList {
	if msgs := utilvalidation.IsDNS1123Label(value); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(fldPath, value, strings.Join(msgs, "; "))}
	}
	return nil
}
