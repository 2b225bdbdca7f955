// Package guard decides whether a member write of the propagation writer
// may go, so that a tenant's work reaches a member only where that
// tenant's ownership reaches: the copy's namespace there is the
// federation's (namespaces.go), what the copy names there is ours, now and
// as the member makes objects later (references.go, unheld.go), a
// member's own object of the copy's name is taken over only when adoption
// was asked and allowed, and told once otherwise (ownership.go), and
// repairs of drift and writes a member refuses are budgeted
// (repairs.go), and a custom resource group a member was not joined for
// is told once per copy (groups.go). It reads members (caches, and live reads within the member
// timeout) and never writes to them; it must not import the writer or any
// other room (rooms_test.go in the engine holds both).
package guard
