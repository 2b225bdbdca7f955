// Package plan is the pure stage of propagation: from a federated object,
// the member clusters and what a member holds, it says which clusters get a
// copy (Placement), what each copy is (Desired, DesiredFor, and ForCopy for
// what one cluster's copy there asks: kept adopted, marked created, pod
// marks left off) and whether a member's copy already holds it (InSync,
// Version, Rolled). It calls no client and reads no clock: every function
// is a table-tested transformation. It must not import the controller, the
// member writer or any client package (rooms_test.go in the controller
// holds that).
package plan
