package kubefed

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

// The federation propagates CustomResourceDefinitions and their custom
// resources only of the API groups `kubefed join --custom-resource-groups`
// names: its account may then write CRDs, but the member's policy lets it
// create, change or delete only the CRDs of those groups, and it may write
// every resource of those groups (their custom resources). Without the
// flag it may only read CRDs. Groups of Kubernetes itself (k8s.io and its
// subdomains) are refused: their CRDs are the cluster's own
// (gateway-api, snapshots), never the federation's to replace.

// crdRules are the account's rights on CRDs and on groups' resources.
func crdRules(groups []string) []rbacv1.PolicyRule {
	if len(groups) == 0 {
		return []rbacv1.PolicyRule{{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: readOnly}}
	}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: readWrite},
		{APIGroups: slices.Clone(groups), Resources: []string{"*"}, Verbs: readWrite},
	}
}

// crdValidation is the policy's rule that the account writes only the CRDs
// of groups.
func crdValidation(fed, policy string, groups []string) admissionregistrationv1.Validation {
	return admissionregistrationv1.Validation{
		Expression: "request.resource.group != 'apiextensions.k8s.io' || request.resource.resource != 'customresourcedefinitions' || " +
			"(object != null ? object : oldObject).spec.group in " + celList(groups),
		Message: fmt.Sprintf("federation %q may write only the CustomResourceDefinitions of the groups %s in this cluster (policy %s)",
			fed, strings.Join(groups, ", "), policy),
		Reason: ptr.To(metav1.StatusReasonForbidden),
	}
}

// customResourceGroupsAnnotation records on the member's ClusterRole the
// groups of --custom-resource-groups (comma-separated, empty for none), so
// that `kubefed join --refresh` keeps them.
const customResourceGroupsAnnotation = "federation.kubernetes.io/custom-resource-groups"

// withCustomResourceGroups adds to the member access what propagating the
// CRDs and custom resources of groups needs, and records groups on the
// ClusterRole.
func withCustomResourceGroups(a *memberAccess, fed string, groups []string) {
	if a.Role.Annotations == nil {
		a.Role.Annotations = map[string]string{}
	}
	a.Role.Annotations[customResourceGroupsAnnotation] = strings.Join(groups, ",")
	a.Role.Rules = append(a.Role.Rules, crdRules(groups)...)
	if len(groups) > 0 {
		a.Policy.Spec.Validations = append(a.Policy.Spec.Validations, crdValidation(fed, a.Policy.Name, groups))
	}
}

// validateCustomResourceGroups checks --custom-resource-groups: API group
// names, none of Kubernetes' own.
func validateCustomResourceGroups(groups []string) error {
	for _, g := range groups {
		if g == "*" || g == "" {
			return fmt.Errorf("--custom-resource-groups: name each API group (%q is not one)", g)
		}
		if msgs := validation.IsDNS1123Subdomain(g); len(msgs) > 0 || !strings.Contains(g, ".") {
			return fmt.Errorf("--custom-resource-groups: %q is not a custom resource's API group (a DNS name such as example.com)", g)
		}
		if g == "k8s.io" || strings.HasSuffix(g, ".k8s.io") || g == "kubernetes.io" || strings.HasSuffix(g, ".kubernetes.io") {
			return fmt.Errorf("--custom-resource-groups: %q is a group of Kubernetes itself, never the federation's to write", g)
		}
	}
	return nil
}
