// Package apiserver compares federation-apiserver with kube-apiserver of the
// same Kubernetes version on the same requests, both on one etcd, and
// prints throughput and p50/p99 latency of both and their ratios. Run with
//
//	make bench-apiserver   (go test ./test/benchmark/apiserver -run '^$' -bench . -benchtime 1x)
//
// kube-apiserver is taken from .cache/bin/kubernetes-v1.36.3 at the module
// root, or from $KUBE_APISERVER; the benchmark is skipped without it.
package apiserver
