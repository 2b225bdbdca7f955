package overrides

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// protected are the fields, by the group and kind of the object (as its
// apiVersion and kind say), that the federation's admission plugins check
// for tenancy on the federated object itself (FederationWorkloads,
// FederationRBAC with its escalation check): a rule that changed one would
// put in a cluster's copy what no one checked, so no override may change
// them, whatever way (a patch of the field, a replace of a parent,
// copy/move into it, a shorthand). They are compared before and after
// each rule (see protectedChanged): a rule that leaves them as they were
// (a replace of /spec/template keeping the account) is fine.
var protected = map[schema.GroupKind][][]string{
	// Pod templates: the account their pods run as in each member;
	// FederationWorkloads allows only accounts the federation propagates
	// (serviceAccount is the deprecated alias, read when the name is empty).
	// And what they claim: ephemeral volumes' templates, devices and
	// PodGroups (FederationWorkloads refuses those naming a member's).
	{Group: "apps", Kind: "Deployment"}: podTemplate("spec", "template", "spec"),
	{Group: "apps", Kind: "ReplicaSet"}: podTemplate("spec", "template", "spec"),
	{Group: "apps", Kind: "DaemonSet"}:  podTemplate("spec", "template", "spec"),
	// A StatefulSet's claim templates: the member makes claims of them.
	{Group: "apps", Kind: "StatefulSet"}: append(podTemplate("spec", "template", "spec"),
		claimSpec("spec", "volumeClaimTemplates", "*", "spec")...),
	{Group: "batch", Kind: "Job"}: podTemplate("spec", "template", "spec"),
	// A CronJob's pods run from its job template's pod template.
	{Group: "batch", Kind: "CronJob"}: podTemplate("spec", "jobTemplate", "spec", "template", "spec"),
	// A Secret of type kubernetes.io/service-account-token makes each member
	// mint a token of the account its annotation names, in the tenant's
	// namespace; FederationWorkloads checks that account on the type and
	// the annotation (the uid annotation binds the token to one account
	// too).
	{Kind: "Secret"}: {
		{"type"},
		{"metadata", "annotations", "kubernetes.io/service-account.name"},
		{"metadata", "annotations", "kubernetes.io/service-account.uid"},
	},
	// externalIPs are routed by every member's kube-proxy to the Service,
	// whoever owns those addresses (CVE-2020-8554); FederationWorkloads
	// allows only the federation's allowed CIDRs.
	// An ExternalName naming another namespace's Service, which ingress
	// controllers follow, is refused too.
	{Kind: "Service"}: {{"spec", "externalIPs"}, {"spec", "externalName"}},
	// The target an HPA scales: in a member it could name another team's
	// Deployment; the federation checks it names a federated copy.
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: {{"spec", "scaleTargetRef"}},
	// What a Role grants: FederationRBAC refuses "*", escalate, bind and
	// impersonate, and checks the author may grant the rest (escalation).
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}: {{"rules"}},
	// What a RoleBinding grants and to whom: FederationRBAC allows only
	// bindable roles, and refuses subjects naming a member's own
	// identities (system: groups and users, other namespaces' accounts).
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}: {{"roleRef"}, {"subjects"}},
	// A claim's bound volume and data source: in a member they would name
	// that cluster's PersistentVolume or snapshot, whoever's;
	// FederationWorkloads allows only claims of the namespace as sources.
	{Kind: "PersistentVolumeClaim"}: claimSpec("spec"),
	// An Ingress's resource backends, which FederationWorkloads refuses:
	// the member resolves them to its own objects. ("*" is each element of
	// a list: hosts and service backends stay open to overrides.)
	{Group: "networking.k8s.io", Kind: "Ingress"}: {
		{"spec", "defaultBackend", "resource"},
		{"spec", "rules", "*", "http", "paths", "*", "backend", "resource"},
	},
}

// podTemplate are the protected fields of a pod spec at path: the
// account its pods run as, what their ephemeral volumes bind or clone,
// and the devices and PodGroup they claim.
func podTemplate(path ...string) [][]string {
	out := [][]string{
		at(path, "serviceAccountName"),
		at(path, "serviceAccount"),
		at(path, "resourceClaims"),
		at(path, "schedulingGroup"),
	}
	return append(out, claimSpec(at(path, "volumes", "*", "ephemeral", "volumeClaimTemplate", "spec")...)...)
}

// claimSpec are the protected fields of a claim spec at path: the volume
// it binds (by name or labels) and what it is filled from.
func claimSpec(path ...string) [][]string {
	return [][]string{at(path, "volumeName"), at(path, "selector"), at(path, "dataSource"), at(path, "dataSourceRef")}
}

// at is path with more after it, in a slice of its own.
func at(path []string, more ...string) []string {
	return append(slices.Clip(path), more...)
}

// servedAs are the older groups a kind of protected is also served under,
// with the same fields.
var servedAs = map[string]string{"extensions": "apps"}

// protectedFields are the protected fields of obj's group and kind.
func protectedFields(obj map[string]any) [][]string {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	group := ""
	if i := strings.Index(apiVersion, "/"); i >= 0 {
		group = apiVersion[:i]
	}
	if g, ok := servedAs[group]; ok {
		group = g
	}
	return protected[schema.GroupKind{Group: group, Kind: kind}]
}

// protectedChanged refuses, under p (the rule's path), a rule that made
// after of before by changing one of before's protected fields.
func protectedChanged(before, after map[string]any, p *field.Path) *field.Error {
	for _, path := range protectedFields(before) {
		if !reflect.DeepEqual(protectedValue(before, path), protectedValue(after, path)) {
			return field.Forbidden(p, "an override may not change "+fieldName(path)+
				": it is checked at the federation on the object itself (set it there)")
		}
	}
	return nil
}

// protectedValue is the value at path of obj; with a "*", the values
// (not null) at each element's rest of the path, by index.
func protectedValue(obj map[string]any, path []string) any {
	if !slices.Contains(path, "*") {
		v, _ := nested(obj, path)
		return v
	}
	out := map[string]any{}
	var walk func(cur any, rest []string, key string)
	walk = func(cur any, rest []string, key string) {
		switch {
		case cur == nil:
		case len(rest) == 0:
			out[key] = cur
		case rest[0] == "*":
			list, _ := cur.([]any)
			for i, e := range list {
				walk(e, rest[1:], key+"["+strconv.Itoa(i)+"]")
			}
		default:
			if m, ok := cur.(map[string]any); ok {
				walk(m[rest[0]], rest[1:], key+"."+rest[0])
			}
		}
	}
	walk(obj, path, "")
	return out
}

// fieldName writes a field's path as Kubernetes does:
// spec.template.spec.serviceAccountName,
// metadata.annotations[kubernetes.io/service-account.name],
// spec.rules[*].http.paths[*].backend.resource.
func fieldName(path []string) string {
	if n := len(path); n >= 3 && path[0] == "metadata" && (path[1] == "annotations" || path[1] == "labels") {
		return strings.Join(path[:n-1], ".") + "[" + path[n-1] + "]"
	}
	return strings.ReplaceAll(strings.Join(path, "."), ".*", "[*]")
}
