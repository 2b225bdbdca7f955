// Package plan is the pure stage of propagation: from a federated object,
// the member clusters and what a member holds, it says which clusters get a
// copy (Placement), what each copy is (Desired, DesiredFor, WithOverrides,
// and ForCopy for what one cluster's copy there asks: kept adopted, marked
// created, pod marks left off), and whether a member's copy already holds
// it: Judge, the one place "in sync" is decided, on the Basis a task
// carries to the writer (Version, Rolled). It calls no client and reads no
// clock: every function is a table-tested transformation. It must not
// import another room of propagation or any client package (rooms_test.go
// in the engine holds that).
package plan
