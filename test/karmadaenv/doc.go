// Package karmadaenv runs Karmada's control plane as local processes on
// loopback, beside test/memberenv's member clusters, so that the
// propagation benchmark can measure Karmada on the same members as the
// federation (make bench-karmada).
//
// What runs is what Karmada's own installation (hack/deploy-karmada.sh,
// artifacts/deploy) runs as pods: an etcd and a kube-apiserver as
// karmada-apiserver (with the aggregation layer's request-header and
// proxy-client settings), a kube-controller-manager with the controllers
// Karmada's manifest enables, karmada-aggregated-apiserver behind an
// APIService, karmada-webhook behind its webhook configurations, and
// karmada-controller-manager and karmada-scheduler. Karmada's CRDs and
// webhook configurations are read from a Karmada source tree
// (charts/karmada/_crds, artifacts/deploy); its programs are prebuilt
// binaries. Nothing of Karmada is part of this repository: the caller
// points at both (KARMADA_SRC, KARMADA_BIN).
//
// Member clusters join in push mode, writing what `karmadactl join` writes
// (pkg/karmadactl/join and pkg/util/credential.go in Karmada's source).
package karmadaenv
