package v1beta1

import corev1 "k8s.io/api/core/v1"

// IsClusterReady reports whether the cluster's Ready condition is True.
func IsClusterReady(c *Cluster) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == ClusterReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
