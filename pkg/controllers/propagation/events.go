package propagation

// ReasonBadSelector: a federated object's cluster selector is invalid.
const ReasonBadSelector = "InvalidClusterSelector"
