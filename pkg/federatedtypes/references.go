package federatedtypes

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Reference is a member object that a copy names in its namespace and acts
// through there: the ServiceAccount its pods run as or a token Secret is
// minted for, an HPA's target, a RoleBinding's Role. The member resolves
// the name with its own rights, whatever object of that name it holds,
// so a copy is written only where the object it names is the federation's
// own copy: else a tenant's copy would act through another team's
// member-only object (run as its account, scale its Deployment, bind its
// Role).
type Reference struct {
	// Resource and Name of the object named, in the copy's namespace.
	Resource schema.GroupVersionResource
	Kind     string
	Name     string
	// Field is where the copy names it.
	Field string
}

// HPATarget returns the resource of a kind an HPA may scale: those the
// federation divides.
func HPATarget(kind string) (schema.GroupVersionResource, bool) {
	r, ok := hpaTargets[kind]
	return r, ok
}

// hpaTargets are the kinds an HPA may scale, by kind.
var hpaTargets = map[string]schema.GroupVersionResource{
	"Deployment":  {Group: "apps", Version: "v1", Resource: "deployments"},
	"ReplicaSet":  {Group: "apps", Version: "v1", Resource: "replicasets"},
	"StatefulSet": {Group: "apps", Version: "v1", Resource: "statefulsets"},
}

var (
	serviceAccounts = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	roles           = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
)

// podSpecPaths are where each kind holds its pod spec.
var podSpecPaths = map[string][]string{
	"Deployment":            {"spec", "template", "spec"},
	"ReplicaSet":            {"spec", "template", "spec"},
	"DaemonSet":             {"spec", "template", "spec"},
	"StatefulSet":           {"spec", "template", "spec"},
	"Job":                   {"spec", "template", "spec"},
	"ReplicationController": {"spec", "template", "spec"},
	"CronJob":               {"spec", "jobTemplate", "spec", "template", "spec"},
	"Pod":                   {"spec"},
}

// References lists the member objects a copy names (see Reference), or
// an error when it names one the federation never propagates (an HPA of a
// kind it does not divide).
func References(copy *unstructured.Unstructured) ([]Reference, error) {
	kind := copy.GetKind()
	if path, ok := podSpecPaths[kind]; ok {
		return podReferences(copy, path), nil
	}
	switch kind {
	case "Secret":
		if t, _, _ := unstructured.NestedString(copy.Object, "type"); t != string(corev1.SecretTypeServiceAccountToken) {
			return nil, nil
		}
		name := copy.GetAnnotations()[corev1.ServiceAccountNameKey]
		return []Reference{{Resource: serviceAccounts, Kind: "ServiceAccount", Name: name,
			Field: "metadata.annotations[" + corev1.ServiceAccountNameKey + "]"}}, nil
	case "HorizontalPodAutoscaler":
		target, _, _ := unstructured.NestedString(copy.Object, "spec", "scaleTargetRef", "kind")
		name, _, _ := unstructured.NestedString(copy.Object, "spec", "scaleTargetRef", "name")
		resource, ok := hpaTargets[target]
		if !ok {
			return nil, fmt.Errorf("spec.scaleTargetRef: %s %q is not a kind the federation divides (Deployment, ReplicaSet, StatefulSet)", target, name)
		}
		return []Reference{{Resource: resource, Kind: target, Name: name, Field: "spec.scaleTargetRef"}}, nil
	case "RoleBinding":
		kind, _, _ := unstructured.NestedString(copy.Object, "roleRef", "kind")
		name, _, _ := unstructured.NestedString(copy.Object, "roleRef", "name")
		if kind != "Role" {
			// ClusterRoles: bounded by the member's policy (bindable ones only).
			return nil, nil
		}
		return []Reference{{Resource: roles, Kind: "Role", Name: name, Field: "roleRef"}}, nil
	}
	return nil, nil
}

// podReferences names the ServiceAccount of a pod spec, unless it is the
// namespace's default one, which every member makes in every namespace
// and pods run as when they name none.
func podReferences(copy *unstructured.Unstructured, path []string) []Reference {
	var out []Reference
	for _, field := range []string{"serviceAccountName", "serviceAccount"} {
		name, _, _ := unstructured.NestedString(copy.Object, append(append([]string{}, path...), field)...)
		if name == "" || name == "default" || (len(out) > 0 && out[0].Name == name) {
			continue
		}
		out = append(out, Reference{Resource: serviceAccounts, Kind: "ServiceAccount", Name: name, Field: fieldPath(path, field)})
	}
	return out
}

func fieldPath(path []string, field string) string {
	out := ""
	for _, p := range append(append([]string{}, path...), field) {
		if out != "" {
			out += "."
		}
		out += p
	}
	return out
}
