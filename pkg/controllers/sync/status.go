package sync

import (
	"encoding/json"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/serviceingresses"
)

// sumStatus adds up integer status fields over the members.
func sumStatus(members []Member, fields ...string) map[string]any {
	status := map[string]any{}
	for _, f := range fields {
		var total int64
		for _, m := range members {
			v, _, _ := unstructured.NestedInt64(m.Object.Object, "status", f)
			total += v
		}
		if total != 0 {
			status[f] = total
		}
	}
	return status
}

// replicasStatus sums a Deployment's or ReplicaSet's replica counts.
func replicasStatus(members []Member) (map[string]any, map[string]string) {
	return sumStatus(members, "replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "fullyLabeledReplicas"), nil
}

// daemonSetStatus sums a DaemonSet's counts.
func daemonSetStatus(members []Member) (map[string]any, map[string]string) {
	return sumStatus(members, "currentNumberScheduled", "desiredNumberScheduled", "numberMisscheduled",
		"numberReady", "numberAvailable", "numberUnavailable", "updatedNumberScheduled"), nil
}

// jobStatus sums a Job's pods; startTime is the earliest, completionTime the
// latest once every member completed.
func jobStatus(members []Member) (map[string]any, map[string]string) {
	status := sumStatus(members, "active", "succeeded", "failed")
	start, end, complete := "", "", len(members) > 0
	for _, m := range members {
		s, _, _ := unstructured.NestedString(m.Object.Object, "status", "startTime")
		if s != "" && (start == "" || s < start) {
			start = s
		}
		c, _, _ := unstructured.NestedString(m.Object.Object, "status", "completionTime")
		if c == "" {
			complete = false
		} else if c > end {
			end = c
		}
	}
	if start != "" {
		status["startTime"] = start
	}
	if complete && end != "" {
		status["completionTime"] = end
	}
	return status, nil
}

// hpaStatus sums current and desired replicas.
func hpaStatus(members []Member) (map[string]any, map[string]string) {
	status := sumStatus(members, "currentReplicas")
	var desired int64
	for _, m := range members {
		v, _, _ := unstructured.NestedInt64(m.Object.Object, "status", "desiredReplicas")
		desired += v
	}
	status["desiredReplicas"] = desired
	return status, nil
}

// loadBalancerIngress returns a member's status.loadBalancer.ingress.
func loadBalancerIngress(obj *unstructured.Unstructured) []any {
	ingress, _, _ := unstructured.NestedSlice(obj.Object, "status", "loadBalancer", "ingress")
	return ingress
}

// unionIngress is the sorted union of the members' load-balancer ingress.
func unionIngress(members []Member) []any {
	seen := map[string]any{}
	for _, m := range members {
		for _, in := range loadBalancerIngress(m.Object) {
			b, _ := json.Marshal(in)
			seen[string(b)] = in
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]any, 0, len(keys))
	for _, k := range keys {
		out = append(out, seen[k])
	}
	return out
}

func ingressStatus(members []Member) (map[string]any, map[string]string) {
	union := unionIngress(members)
	if len(union) == 0 {
		return map[string]any{"loadBalancer": map[string]any{}}, nil
	}
	return map[string]any{"loadBalancer": map[string]any{"ingress": union}}, nil
}

// serviceStatus is the union of the members' load-balancer ingress and the
// service-ingresses annotation: per cluster with a load balancer, its
// addresses, or null where the Service has no ready endpoints.
func serviceStatus(members []Member) (map[string]any, map[string]string) {
	status, _ := ingressStatus(members)
	var value serviceingresses.Ingresses
	for _, m := range members {
		ingress := loadBalancerIngress(m.Object)
		if len(ingress) == 0 {
			continue
		}
		e := serviceingresses.ClusterIngress{Cluster: m.Cluster}
		if m.ReadyEndpoints {
			raw, _ := json.Marshal(ingress)
			if err := json.Unmarshal(raw, &e.Items); err != nil {
				continue
			}
		}
		value.Items = append(value.Items, e)
	}
	if len(value.Items) == 0 {
		return status, map[string]string{serviceingresses.Annotation: ""}
	}
	return status, map[string]string{serviceingresses.Annotation: value.String()}
}
