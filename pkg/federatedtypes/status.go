package federatedtypes

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
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

// deploymentStatus sums a Deployment's replica counts and derives its
// Available, Progressing and ReplicaFailure conditions from the members'.
func deploymentStatus(members []Member) (map[string]any, map[string]string) {
	status := sumStatus(members, "replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas")
	var conditions []any
	for _, t := range []string{"Available", "Progressing"} {
		if c := memberCondition(members, t); c != nil {
			conditions = append(conditions, c)
		}
	}
	// As in a cluster, ReplicaFailure is there only while pods cannot be
	// made (a quota, an admission webhook): it names the members.
	if c := failingCondition(members, "ReplicaFailure", "True"); c != nil {
		conditions = append(conditions, c)
	}
	if len(conditions) > 0 {
		status["conditions"] = conditions
	}
	return status, nil
}

// replicaSetStatus sums a ReplicaSet's replica counts.
func replicaSetStatus(members []Member) (map[string]any, map[string]string) {
	return sumStatus(members, "replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"), nil
}

// daemonSetStatus sums a DaemonSet's counts.
func daemonSetStatus(members []Member) (map[string]any, map[string]string) {
	return sumStatus(members, "currentNumberScheduled", "desiredNumberScheduled", "numberMisscheduled",
		"numberReady", "numberAvailable", "numberUnavailable", "updatedNumberScheduled"), nil
}

// jobStatus sums a Job's pods; startTime is the earliest. The Job is
// complete (SuccessCriteriaMet and Complete, completionTime the latest)
// only once every member's part completed; a member's failed part makes
// it FailureTarget, and Failed once every part finished (jobFailure).
func jobStatus(members []Member) (map[string]any, map[string]string) {
	status := sumStatus(members, "active", "ready", "succeeded", "failed")
	start, end, complete := "", "", len(members) > 0
	for _, m := range members {
		s, _, _ := unstructured.NestedString(m.Object.Object, "status", "startTime")
		if s != "" && (start == "" || s < start) {
			start = s
		}
		c, _, _ := unstructured.NestedString(m.Object.Object, "status", "completionTime")
		if c == "" || ConditionOf(m.Object, "Complete")["status"] != "True" {
			complete = false
		} else if c > end {
			end = c
		}
	}
	if start != "" {
		status["startTime"] = start
	}
	if len(members) == 1 {
		// An Indexed Job runs whole in one member: its indexes are the
		// federated Job's (those of several members would overlap).
		for _, f := range []string{"completedIndexes", "failedIndexes"} {
			if v, found, _ := unstructured.NestedString(members[0].Object.Object, "status", f); found {
				status[f] = v
			}
		}
	}
	if complete && end != "" && start != "" {
		status["completionTime"] = end
		var conditions []any
		for _, t := range []string{"SuccessCriteriaMet", "Complete"} {
			conditions = append(conditions, map[string]any{"type": t, "status": "True", "reason": "CompletionsReached",
				"message":       fmt.Sprintf("Reached the expected number of succeeded pods in all %d member clusters", len(members)),
				"lastProbeTime": end, "lastTransitionTime": end})
		}
		status["conditions"] = conditions
	} else if failure := jobFailure(members, start != ""); failure != nil {
		status["conditions"] = failure
	}
	return status, nil
}

// settleJob keeps what the apiserver does not let a Job's status undo:
// a finished Job's status is final, startTime stays once set, and the
// succeeded and failed counters never decrease, nor do an Indexed Job's
// indexes go (a member that is away still ran its pods).
func settleJob(current, status map[string]any) {
	if jobFinished(current) {
		clear(status)
		maps.Copy(status, current)
		return
	}
	if v, ok := current["startTime"]; ok {
		status["startTime"] = v
	}
	keepFailureTarget(current, status)
	// The indexes of a member that is away stay as they were.
	for _, f := range []string{"completedIndexes", "failedIndexes"} {
		if _, now := status[f]; !now {
			if v, ok := current[f]; ok {
				status[f] = v
			}
		}
	}
	for _, f := range []string{"succeeded", "failed"} {
		had, _, _ := unstructured.NestedInt64(current, f)
		now, _, _ := unstructured.NestedInt64(status, f)
		if had > now {
			status[f] = had
		}
	}
}

// jobFinished reports whether a Job's status is Complete or Failed.
func jobFinished(status map[string]any) bool {
	conditions, _ := status["conditions"].([]any)
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && (m["type"] == "Complete" || m["type"] == "Failed") && m["status"] == "True" {
			return true
		}
	}
	return false
}

// completeJob keeps a Job (not Indexed) from completing before its
// members' succeeded pods add up to its completions: the copies that came
// back may be only some of them (a member given none of the pods
// completes at once, before the others' copies are seen), and a finished
// status is final (settleJob).
func completeJob(fed *unstructured.Unstructured, status map[string]any, _ bool) {
	completions, found, _ := unstructured.NestedInt64(fed.Object, "spec", "completions")
	current, _, _ := unstructured.NestedMap(fed.Object, "status")
	if !found || IndexedJob(fed) || jobFinished(current) {
		return
	}
	if succeeded, _, _ := unstructured.NestedInt64(status, "succeeded"); succeeded >= completions {
		return
	}
	conditions, _ := status["conditions"].([]any)
	var kept []any
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && (m["type"] == "Complete" || m["type"] == "SuccessCriteriaMet") {
			continue
		}
		kept = append(kept, c)
	}
	if len(kept) < len(conditions) {
		delete(status, "completionTime")
		if len(kept) == 0 {
			delete(status, "conditions")
		} else {
			status["conditions"] = kept
		}
	}
}

// ConditionOf returns a member copy's condition of type t, or nil.
func ConditionOf(obj *unstructured.Unstructured, t string) map[string]any {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == t {
			return m
		}
	}
	return nil
}

// memberCondition derives a condition of type t from the members' (in
// cluster order): True when every member that reports it has it True,
// else the first member's that does not, with the cluster named. Its times
// are the members' latest, so that the result changes only when theirs do.
// nil when no member reports it.
func memberCondition(members []Member, t string) map[string]any {
	var (
		trues    []map[string]any
		notTrue  map[string]any
		notFrom  string
		updated  string
		changed  string
		reasons  = map[any]bool{}
		clusters = slices.SortedFunc(slices.Values(members), func(a, b Member) int { return strings.Compare(a.Cluster, b.Cluster) })
	)
	for _, m := range clusters {
		c := ConditionOf(m.Object, t)
		if c == nil {
			continue
		}
		for _, f := range []struct {
			key  string
			last *string
		}{{"lastUpdateTime", &updated}, {"lastProbeTime", &updated}, {"lastTransitionTime", &changed}} {
			if v, _ := c[f.key].(string); v > *f.last {
				*f.last = v
			}
		}
		if c["status"] == "True" {
			trues = append(trues, c)
			reasons[c["reason"]] = true
		} else if notTrue == nil {
			notTrue, notFrom = c, m.Cluster
		}
	}
	out := map[string]any{"type": t}
	switch {
	case notTrue != nil:
		out["status"], out["reason"] = notTrue["status"], notTrue["reason"]
		out["message"] = fromCluster(notFrom, notTrue["message"])
	case len(trues) > 0:
		out["status"], out["reason"] = "True", trues[0]["reason"]
		if len(reasons) > 1 {
			out["reason"] = "MemberClusters" + t
		}
		out["message"] = fmt.Sprintf("%s in all %d member clusters", t, len(trues))
	default:
		return nil
	}
	if updated != "" {
		out["lastUpdateTime"] = updated
	}
	if changed != "" {
		out["lastTransitionTime"] = changed
	}
	return out
}

// hpaStatus sums current and desired replicas; each metric's current
// utilisation is the members' average weighted by their current replicas.
func hpaStatus(members []Member) (map[string]any, map[string]string) {
	status := sumStatus(members, "currentReplicas")
	var desired int64
	for _, m := range members {
		v, _, _ := unstructured.NestedInt64(m.Object.Object, "status", "desiredReplicas")
		desired += v
	}
	status["desiredReplicas"] = desired
	if metrics := weightedMetrics(members); len(metrics) > 0 {
		status["currentMetrics"] = metrics
	}
	return status, nil
}

// weightedMetrics averages the resource utilisation metrics of the
// members' status.currentMetrics (autoscaling/v2) by current replicas.
func weightedMetrics(members []Member) []any {
	type sum struct{ weighted, replicas int64 }
	sums := map[string]*sum{}
	for _, m := range members {
		replicas, _, _ := unstructured.NestedInt64(m.Object.Object, "status", "currentReplicas")
		metrics, _, _ := unstructured.NestedSlice(m.Object.Object, "status", "currentMetrics")
		for _, raw := range metrics {
			metric, _ := raw.(map[string]any)
			name, _, _ := unstructured.NestedString(metric, "resource", "name")
			util, found, _ := unstructured.NestedInt64(metric, "resource", "current", "averageUtilization")
			if metric["type"] != "Resource" || name == "" || !found || replicas == 0 {
				continue
			}
			if sums[name] == nil {
				sums[name] = &sum{}
			}
			sums[name].weighted += util * replicas
			sums[name].replicas += replicas
		}
	}
	var out []any
	for _, name := range slices.Sorted(maps.Keys(sums)) {
		s := sums[name]
		out = append(out, map[string]any{"type": "Resource", "resource": map[string]any{
			"name": name, "current": map[string]any{"averageUtilization": s.weighted / s.replicas}}})
	}
	return out
}

// LoadBalancerIngress returns a member's status.loadBalancer.ingress.
func LoadBalancerIngress(obj *unstructured.Unstructured) []any {
	ingress, _, _ := unstructured.NestedSlice(obj.Object, "status", "loadBalancer", "ingress")
	return ingress
}

// unionIngress is the sorted union of the members' load-balancer ingress.
func unionIngress(members []Member) []any {
	seen := map[string]any{}
	for _, m := range members {
		for _, in := range LoadBalancerIngress(m.Object) {
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
		ingress := LoadBalancerIngress(m.Object)
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
		return status, map[string]string{federationv1beta1.ServiceIngressesAnnotation: ""}
	}
	return status, map[string]string{federationv1beta1.ServiceIngressesAnnotation: value.String()}
}
