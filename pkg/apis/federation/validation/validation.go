// Package validation validates federation API objects.
package validation

import (
	"net"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
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

// ValidateClusterSpec requires at least one server address, each with a
// client CIDR that parses and a server address, and a valid Secret name
// when a secretRef is given.
func ValidateClusterSpec(spec *federationv1beta1.ClusterSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	addrPath := fldPath.Child("serverAddressByClientCIDRs")
	if len(spec.ServerAddressByClientCIDRs) == 0 {
		allErrs = append(allErrs, field.Required(addrPath, "at least one server address is required"))
	}
	for i, addr := range spec.ServerAddressByClientCIDRs {
		idxPath := addrPath.Index(i)
		if addr.ClientCIDR == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("clientCIDR"), ""))
		} else if _, _, err := net.ParseCIDR(addr.ClientCIDR); err != nil {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("clientCIDR"), addr.ClientCIDR, "must be a CIDR such as 0.0.0.0/0"))
		}
		if addr.ServerAddress == "" {
			allErrs = append(allErrs, field.Required(idxPath.Child("serverAddress"), ""))
		}
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

// ValidateClusterStatus checks that each condition has a type and a status
// of True, False or Unknown.
func ValidateClusterStatus(status *federationv1beta1.ClusterStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[federationv1beta1.ClusterConditionType]bool{}
	for i, cond := range status.Conditions {
		idxPath := fldPath.Child("conditions").Index(i)
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
	}
	return allErrs
}
