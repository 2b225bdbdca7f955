package v1beta1

// FinalizerDeleteFromUnderlyingClusters holds a federated object (a
// ConfigMap, Deployment, Namespace, …) until the federation controller
// manager has deleted or orphaned its copies in the member clusters.
const FinalizerDeleteFromUnderlyingClusters = "federation.kubernetes.io/delete-from-underlying-clusters"
