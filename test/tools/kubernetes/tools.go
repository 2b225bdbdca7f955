//go:build tools

// Package tools pins the Kubernetes control-plane binaries that the member-cluster
// test environment runs. Nothing imports it; `go build` of the listed commands uses it.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
