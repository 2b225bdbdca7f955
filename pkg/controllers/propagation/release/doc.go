// Package release is the federation side of letting a federated object's
// member copies go: the deletion of an object held by our finalizer
// (deletion.go), the tombstones the federation apiserver writes for every
// other deletion (tombstones.go), objects never propagated for their
// namespace (refused.go), objects that stay at the federation or that
// every member has of its own (local.go), and the count of strays, copies
// whose object is gone (strays.go). What to do with each copy is handed to
// the writer as Delete, Orphan or Unplace tasks: release never touches a
// member itself (its Members has no client). It tells the engine what to
// do next as a Result (reconcile again later, forget, Propagated=False)
// rather than reaching into its queue, and must not import the engine
// (rooms_test.go in the engine holds that).
package release
