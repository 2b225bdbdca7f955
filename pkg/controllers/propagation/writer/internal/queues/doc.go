// Package queues owns the member writes of one propagation writer: one
// rate-limited queue per member cluster, each with its own workers,
// holding at most one task per (object, cluster). A task is what a member
// should be made to hold of a federated object: the copy applied, removed
// because the cluster is no longer selected, or, while the object is
// deleted, deleted or orphaned. Every write to a member goes through here,
// so a slow member holds up only its own copies, and a newer task for a
// copy replaces one that has not run yet.
//
// Queues owns its lock: callers see tasks only through its methods. It
// performs no I/O itself (the Handlers given to New do: the writer), and
// must not import the writer or the propagation engine.
package queues
