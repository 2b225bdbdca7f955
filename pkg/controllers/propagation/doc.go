// Package propagation is the engine of the propagation controller: one
// generic controller, configured per federated type by a
// federatedtypes.Type, keeps every selected member cluster's copy of each
// federated object in step with it, lets the copies go when the object
// goes, and brings the members' status back.
//
// It is four rooms, whose arrows run one way (rooms_test.go holds them):
//
//		engine (this package) ──► release ──► writer ──► writer/guard
//		        │                               │
//		        └──────────────► plan ◄─────────┘
//
//	  - plan: the pure stage. Placement, the desired copy of each cluster
//	    (replica shares, overrides, adoption and pod marks), and Judge, the
//	    one place "in sync" is decided. No client, no clock.
//	  - writer: every member write, through one queue per member; package
//	    guard says whether a write may go (namespace and reference
//	    ownership, adoption, repair budgets). It never calls the engine: the
//	    ends of writes come back as Outcomes the engine takes (followWrites).
//	  - release: deletion, tombstones, refused, local and member-owned
//	    objects, strays; it lets copies go through the writer and returns
//	    Results.
//	  - engine: informers and the federated-object queue; Sync reads top to
//	    bottom (reconcile.go): release steps → placement → desired copies →
//	    replica plan (workload.go, hpa.go) → overrides → one judgment per
//	    copy (compare) → writer.Dispatch → status (status.go).
//
// Per-type policy lives in package federatedtypes, replica planning in
// package planner/replicaplan; no room names a type. Only the controller
// manager's wiring imports this package; it must not import the apiserver
// or another controller.
package propagation
