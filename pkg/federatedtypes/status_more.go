package federatedtypes

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	quota "k8s.io/apiserver/pkg/quota/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// sumAll adds up integer status fields over the members, zeros included:
// for status fields without omitempty, which the apiserver stores as 0.
func sumAll(members []Member, fields ...string) map[string]any {
	status := sumStatus(members, fields...)
	for _, f := range fields {
		if _, ok := status[f]; !ok {
			status[f] = int64(0)
		}
	}
	return status
}

// byCluster returns the members in cluster name order.
func byCluster(members []Member) []Member {
	return slices.SortedFunc(slices.Values(members), func(a, b Member) int { return strings.Compare(a.Cluster, b.Cluster) })
}

// statefulSetStatus sums a StatefulSet's replica counts. Its revisions are
// those of the first member still rolling out (current differs from
// update), else the first member's, so that `kubectl rollout status` waits
// for every member's rolling update.
func statefulSetStatus(members []Member) (map[string]any, map[string]string) {
	status := sumAll(members, "replicas", "availableReplicas")
	maps.Copy(status, sumStatus(members, "readyReplicas", "currentReplicas", "updatedReplicas"))
	var current, update string
	for i, m := range byCluster(members) {
		c, _, _ := unstructured.NestedString(m.Object.Object, "status", "currentRevision")
		u, _, _ := unstructured.NestedString(m.Object.Object, "status", "updateRevision")
		if i == 0 || c != u {
			current, update = c, u
		}
		if c != u {
			break
		}
	}
	if current != "" {
		status["currentRevision"] = current
	}
	if update != "" {
		status["updateRevision"] = update
	}
	return status, nil
}

// cronJobStatus lists every member's active Jobs (so ACTIVE counts them
// all); lastScheduleTime and lastSuccessfulTime are the latest of any
// member.
func cronJobStatus(members []Member) (map[string]any, map[string]string) {
	status := map[string]any{}
	var active []any
	for _, m := range byCluster(members) {
		refs, _, _ := unstructured.NestedSlice(m.Object.Object, "status", "active")
		active = append(active, refs...)
	}
	if len(active) > 0 {
		status["active"] = active
	}
	for _, f := range []string{"lastScheduleTime", "lastSuccessfulTime"} {
		if t := latest(members, f); t != "" {
			status[f] = t
		}
	}
	return status, nil
}

// latest is the latest of the members' RFC 3339 status field f, or "".
func latest(members []Member, f string) string {
	var out string
	for _, m := range members {
		if t, _, _ := unstructured.NestedString(m.Object.Object, "status", f); t > out {
			out = t
		}
	}
	return out
}

// podDisruptionBudgetStatus sums the members' healthy, desired and expected
// pods and the disruptions they allow (each member enforces its own
// budget on its own pods), with DisruptionAllowed True only when every
// member's is.
func podDisruptionBudgetStatus(members []Member) (map[string]any, map[string]string) {
	status := sumAll(members, "currentHealthy", "desiredHealthy", "expectedPods", "disruptionsAllowed")
	if c := memberCondition(members, "DisruptionAllowed"); c != nil {
		status["conditions"] = []any{c}
	}
	return status, nil
}

// PersistentVolumeClaim phases.
const (
	claimBound   = "Bound"
	claimPending = "Pending"
	claimLost    = "Lost"
)

// claimStatus is Bound when every member's claim is (completeClaim also
// asks every selected member to hold it), Lost when any member's is lost,
// else Pending; when not Bound, a Bound=False condition names the members
// whose claim is not (claimNotBound). A Bound claim's capacity is, per resource, the smallest of
// the members' (what every cluster provides), its access modes the first
// member's.
func claimStatus(members []Member) (map[string]any, map[string]string) {
	bound := 0
	for _, m := range members {
		switch p, _, _ := unstructured.NestedString(m.Object.Object, "status", "phase"); p {
		case claimLost:
			return map[string]any{"phase": claimLost, "conditions": []any{claimNotBound(members, claimLost)}}, nil
		case claimBound:
			bound++
		}
	}
	if bound == 0 || bound < len(members) {
		status := map[string]any{"phase": claimPending}
		if c := claimNotBound(members, claimPending); c != nil {
			status["conditions"] = []any{c}
		}
		return status, nil
	}
	status := map[string]any{"phase": claimBound}
	ordered := byCluster(members)
	if modes, _, _ := unstructured.NestedStringSlice(ordered[0].Object.Object, "status", "accessModes"); len(modes) > 0 {
		status["accessModes"] = toAny(modes)
	}
	capacity := map[string]resource.Quantity{}
	for i, m := range ordered {
		have, _, _ := unstructured.NestedStringMap(m.Object.Object, "status", "capacity")
		for name := range capacity {
			if _, ok := have[name]; !ok {
				delete(capacity, name)
			}
		}
		for name, v := range have {
			q, err := resource.ParseQuantity(v)
			if err != nil {
				continue
			}
			if prev, ok := capacity[name]; i == 0 || (ok && q.Cmp(prev) < 0) {
				capacity[name] = q
			}
		}
	}
	if len(capacity) > 0 {
		status["capacity"] = quantities(capacity)
	}
	return status, nil
}

// completeClaim keeps a claim Pending until every selected member holds
// its current version: Bound means bound everywhere it should be.
func completeClaim(_ *unstructured.Unstructured, status map[string]any, all bool) {
	if !all && status["phase"] == claimBound {
		clear(status)
		status["phase"] = claimPending
	}
}

// resourceQuotaStatus reports what the members' quotas count as used. Each
// member enforces the whole quota on its own, so used can reach hard in
// every cluster: status.used of a resource the members count is the
// largest use in any member (used below hard says there is room in every
// one; a sum would read as over the limit while no member is), and each
// member's own use is in the MemberQuotaUsageAnnotation. The object
// counts of the federated types (QuotaCounted) are left out: the
// federation counts its own objects for them (completeQuota).
func resourceQuotaStatus(members []Member) (map[string]any, map[string]string) {
	used := map[string]resource.Quantity{}
	byMember := map[string]map[string]string{}
	for _, m := range members {
		have, _, _ := unstructured.NestedStringMap(m.Object.Object, "status", "used")
		for name, v := range have {
			if QuotaCounted(name) {
				continue
			}
			q, err := resource.ParseQuantity(v)
			if err != nil {
				continue
			}
			if byMember[m.Cluster] == nil {
				byMember[m.Cluster] = map[string]string{}
			}
			byMember[m.Cluster][name] = q.String()
			if most, ok := used[name]; !ok || q.Cmp(most) > 0 {
				used[name] = q
			}
		}
	}
	status := map[string]any{}
	if len(used) > 0 {
		status["used"] = quantities(used)
	}
	annotation := ""
	if len(byMember) > 0 {
		raw, _ := json.Marshal(byMember) // map keys sorted: stable
		annotation = string(raw)
	}
	return status, map[string]string{federationv1beta1.MemberQuotaUsageAnnotation: annotation}
}

// completeQuota reports the federated quota's own hard limits, and the
// members' usage of only those. The object counts of the federated types
// (QuotaCounted), in hard and used, are the federation's resource quota
// controller's (it sets their hard limit together with their usage, and
// the ResourceQuota admission plugin adds to their usage): they are kept as
// the federated object has them, so that neither writer takes back what
// the other wrote (both write by update, so a stale one conflicts and
// retries).
func completeQuota(fed *unstructured.Unstructured, status map[string]any, _ bool) {
	spec, _, _ := unstructured.NestedMap(fed.Object, "spec", "hard")
	current, _, _ := unstructured.NestedMap(fed.Object, "status")
	hard := map[string]any{}
	for name, v := range spec {
		if !QuotaCounted(name) {
			hard[name] = v
		}
	}
	used := map[string]any{}
	if summed, ok := status["used"].(map[string]any); ok {
		for name, v := range summed {
			if _, limited := hard[name]; limited {
				used[name] = v
			}
		}
	}
	for field, out := range map[string]map[string]any{"hard": hard, "used": used} {
		have, _ := current[field].(map[string]any)
		for name, v := range have {
			if QuotaCounted(name) {
				out[name] = v
			}
		}
	}
	delete(status, "hard")
	delete(status, "used")
	if len(hard) > 0 {
		status["hard"] = hard
	}
	if len(used) > 0 {
		status["used"] = used
	}
}

// quotaHardTampered reports a quota whose status.hard differs from what
// completeQuota writes: spec.hard's limits of what members count. (The
// federation's own object counts are its quota controller's, which, as
// kube-controller-manager's, puts them back at its resync.) A quota without
// status.hard has not been written yet: its first status is on its way.
func quotaHardTampered(fed *unstructured.Unstructured) bool {
	spec, _, _ := unstructured.NestedMap(fed.Object, "spec", "hard")
	status, found, _ := unstructured.NestedMap(fed.Object, "status", "hard")
	if !found {
		return false
	}
	want, ok1 := membersCountedLimits(spec)
	have, ok2 := membersCountedLimits(status)
	return !ok1 || !ok2 || !quota.Equals(want, have)
}

// membersCountedLimits are the limits of what members count among a quota's
// hard limits; false when one is not a quantity.
func membersCountedLimits(limits map[string]any) (corev1.ResourceList, bool) {
	out := corev1.ResourceList{}
	for name, v := range limits {
		if QuotaCounted(name) {
			continue
		}
		s, _ := v.(string)
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return nil, false
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, true
}

// quantities are quantities as status values, in canonical form (as the
// apiserver stores them).
func quantities(qs map[string]resource.Quantity) map[string]any {
	out := make(map[string]any, len(qs))
	for name, q := range qs {
		out[name] = q.String()
	}
	return out
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
