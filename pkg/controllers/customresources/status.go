package customresources

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// ClusterStatusAnnotation on a federated custom resource holds each
// member's status of it: a JSON map of cluster name to that cluster's
// status.
const ClusterStatusAnnotation = "federation.kubernetes.io/cluster-status"

// maxClusterStatus bounds the annotation (an object's annotations may hold
// 256 KiB in all): a cluster's status that would make it larger is replaced
// by a note saying so.
const maxClusterStatus = 64 << 10

// ReadyCondition is the condition aggregated over the members: True when
// every member's copy reports Ready True.
const ReadyCondition = "Ready"

// annotationOnly brings the members' status back in the annotation only:
// the CRD has no status subresource to write to.
func annotationOnly(members []federatedtypes.Member) (map[string]any, map[string]string) {
	return nil, map[string]string{ClusterStatusAnnotation: clusterStatus(members)}
}

// statusOf returns the status function of a CRD with a status subresource:
// the annotation, the aggregated Ready condition and the aggregated fields.
func statusOf(rules []rule) func([]federatedtypes.Member) (map[string]any, map[string]string) {
	return func(members []federatedtypes.Member) (map[string]any, map[string]string) {
		status := map[string]any{}
		if ready := readyOf(members); ready != nil {
			status["conditions"] = []any{ready}
		}
		for _, r := range rules {
			if v, ok := aggregate(members, r); ok {
				_ = unstructured.SetNestedField(status, v, r.path...)
			}
		}
		return status, map[string]string{ClusterStatusAnnotation: clusterStatus(members)}
	}
}

// clusterStatus is the annotation's value; empty (the annotation goes)
// when no member reports a status.
func clusterStatus(members []federatedtypes.Member) string {
	byCluster := map[string]any{}
	for _, m := range members {
		if s, ok := m.Object.Object["status"]; ok && s != nil {
			byCluster[m.Cluster] = s
		}
	}
	if len(byCluster) == 0 {
		return ""
	}
	raw, err := json.Marshal(byCluster)
	if err != nil {
		return ""
	}
	if len(raw) > maxClusterStatus {
		share := maxClusterStatus / len(byCluster)
		for cluster, s := range byCluster {
			if one, _ := json.Marshal(s); len(one) > share {
				byCluster[cluster] = map[string]any{"omitted": fmt.Sprintf("status of %d bytes, over this annotation's share of %d", len(one), share)}
			}
		}
		raw, _ = json.Marshal(byCluster)
	}
	return string(raw)
}

// readyOf aggregates the members' Ready conditions: nil when none reports
// one, else True when all do True. Its time is the latest of theirs, so
// that it changes only when theirs do.
func readyOf(members []federatedtypes.Member) map[string]any {
	var notReady []string
	var latest string
	seen := false
	for _, m := range members {
		c := federatedtypes.ConditionOf(m.Object, ReadyCondition)
		if c == nil {
			notReady = append(notReady, m.Cluster)
			continue
		}
		seen = true
		if c["status"] != "True" {
			notReady = append(notReady, m.Cluster)
		}
		if t, _ := c["lastTransitionTime"].(string); t > latest {
			latest = t
		}
	}
	if !seen {
		return nil
	}
	ready := map[string]any{"type": ReadyCondition, "status": "True", "reason": "AllClustersReady",
		"message": fmt.Sprintf("ready in every member cluster holding it (%d)", len(members))}
	if len(notReady) > 0 {
		slices.Sort(notReady)
		ready["status"], ready["reason"] = "False", "ClustersNotReady"
		ready["message"] = "not ready in " + strings.Join(notReady, ", ")
	}
	if latest != "" {
		ready["lastTransitionTime"] = latest
	}
	return ready
}

// aggregate applies a rule to the members' status; false when no member
// reports the field. Integers stay integers.
func aggregate(members []federatedtypes.Member, r rule) (any, bool) {
	var values []float64
	integers := true
	for _, m := range members {
		v, found, _ := unstructured.NestedFieldNoCopy(m.Object.Object, append([]string{"status"}, r.path...)...)
		if !found {
			continue
		}
		switch n := v.(type) {
		case int64:
			values = append(values, float64(n))
		case float64:
			values = append(values, n)
			integers = integers && n == math.Trunc(n)
		}
	}
	if len(values) == 0 {
		return nil, false
	}
	out := values[0]
	switch r.op {
	case "sum":
		out = 0
		for _, v := range values {
			out += v
		}
	case "min":
		out = slices.Min(values)
	case "max":
		out = slices.Max(values)
	}
	if integers {
		return int64(out), true
	}
	return out, true
}
