// Package replicaplan divides what a federated workload runs over its
// clusters with the planner: the replica (or parallelism and completions)
// plan from the preferences annotation and the clusters' capacity, the
// division of a federated HPA's minimum and maximum over the clusters that
// run its target, and the following of the count the members' HPAs choose.
//
// It is pure: it reads objects and returns plans, and must not import a
// client, the controller packages or the apiserver.
package replicaplan

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// objectKey is the planner's key of an object (namespace/name), which
// spreads remainders differently for each object.
func objectKey(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
