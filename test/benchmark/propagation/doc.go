// Package propagation measures how fast and how cheaply a local federation
// gets objects into N real member clusters, against a reference measured in
// the same run: a client with the controller manager's member settings (the
// same QPS and burst per member, the same number of objects in flight)
// writing the same objects straight to the members. That reference is the
// limit the members allow; every figure is printed beside it with the ratio.
//
//	make bench CLUSTERS=1,3   (go test ./test/benchmark/propagation -run '^$' -bench . -benchtime 1x -timeout 0 -args -clusters=1,3)
//
// Scenarios: burst (1,000 ConfigMaps until every copy is seen by a watch on
// every member; each round also measures its limit, the reference's writes
// plus the creates at the federation with the controller manager stopped,
// which no federation on the machine can beat), deletion (the same 1,000 until every copy is gone), steady
// (10 objects a second for -steady-duration: per object, from the
// federation's response to the last member's watch event, then the same for
// updates) and deployments (100 Deployments of 10 replicas with a weighted
// preference, until the federation reports them all ready). The CPU and peak
// resident memory of the controller manager and the federation apiserver
// are measured over each federated scenario.
//
// The table goes to stdout and the figures, as JSON, to -out. The
// benchmark is skipped without the cached Kubernetes binaries (make tools).
package propagation
