// Package writer owns every write of the propagation controller to a
// member cluster, and the live reads that guard one: the per-cluster
// queues (internal/queues), create, apply, adopt and conflict
// (memberwrite.go, ownership.go), the memory of what our writes left
// (applied.go), the federation's RBAC binding in namespaces it created
// (namespacerbac.go), and the member-write events on the federated object.
// Whether a write may go at all (namespace and reference ownership,
// adoption, repair budgets) is package guard's to say. A removal the
// caches ask for is confirmed by live reads first (unplace.go).
//
// The engine (package propagation) hands it tasks (Dispatch) and reads its
// state (State, Last, ReferencesCached); the writer never calls
// the engine: what the engine must do after a write (reconcile again, time
// the propagation) it queues as an Outcome, which the engine takes. It
// must not import the engine or the release stage, nor write federated
// objects (rooms_test.go in the engine holds the imports).
package writer
