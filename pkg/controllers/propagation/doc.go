// Package propagation holds the propagation controller: one generic
// controller, configured per federated type by a federatedtypes.Type,
// keeps every selected member cluster's copy of each federated object in
// step with it, deletes or orphans the copies when the object goes, and
// brings the members' status back.
//
// The reconcile of one object (reconcile.go) reads top to bottom:
// placement → desired copies → replica plan → in-sync decision → dispatch
// of member writes → status. What is pure of it (placement, the desired
// copy of each cluster, whether a member's copy holds it) is package plan,
// which knows no client. Member writes of every kind go through the
// per-cluster queues of package memberwrites; the writes themselves are in
// memberwrite.go.
//
// Per-type policy (what travels, prune, status aggregation) lives in
// package federatedtypes and replica planning in package
// planner/replicaplan. Only the controller manager's wiring imports this
// package; it must not import the apiserver or another controller.
package propagation
