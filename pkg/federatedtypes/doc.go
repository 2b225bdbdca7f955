// Package federatedtypes is the one table of the federated types: for each,
// the group/versions the federation apiserver serves it under, the resource
// propagated to members, what travels in a copy and what must not (prune),
// how the members' status is brought back (aggregation and settle rules),
// and which objects never travel (the federation's own namespace).
//
// The federation apiserver builds its storage from it, the admission
// plugins learn the federated resources from it, and the controller
// manager starts one propagation controller per entry.
//
// It owns data and pure functions only: it must not import the apiserver,
// the admission plugins or any controller package.
package federatedtypes
