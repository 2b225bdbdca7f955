// Package federation holds the name of the federation API group, which
// serves the Cluster type. The types themselves live in v1beta1: the group
// has one version, so the same Go types are registered as the internal
// version too (no conversions are generated).
package federation

import "k8s.io/apimachinery/pkg/runtime/schema"

// GroupName is the name of the federation API group.
const GroupName = "federation"

// Resource returns the group-qualified resource for a resource name.
func Resource(resource string) schema.GroupResource {
	return schema.GroupResource{Group: GroupName, Resource: resource}
}
