//go:build tools

// Package tools pins the Kubernetes control-plane binaries that the member-cluster
// test environment runs, and the conformance test binary (e2e.test) that the
// conformance suite runs against the federation, with the ginkgo command that
// runs it in parallel. Nothing imports it; `go build` of the listed commands
// and `go test -c k8s.io/kubernetes/test/e2e` use it.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"

	// e2e.test: the package and what its e2e_test.go imports, so that go.sum
	// holds every module `go test -c` needs.
	_ "github.com/onsi/ginkgo/v2"
	// ginkgo's command, which runs e2e.test in parallel processes.
	_ "github.com/onsi/ginkgo/v2/ginkgo"
	_ "k8s.io/kubernetes/test/conformance/testdata"
	_ "k8s.io/kubernetes/test/e2e"
	_ "k8s.io/kubernetes/test/e2e/apimachinery"
	_ "k8s.io/kubernetes/test/e2e/apps"
	_ "k8s.io/kubernetes/test/e2e/architecture"
	_ "k8s.io/kubernetes/test/e2e/auth"
	_ "k8s.io/kubernetes/test/e2e/autoscaling"
	_ "k8s.io/kubernetes/test/e2e/cloud"
	_ "k8s.io/kubernetes/test/e2e/common"
	_ "k8s.io/kubernetes/test/e2e/dra"
	_ "k8s.io/kubernetes/test/e2e/feature"
	_ "k8s.io/kubernetes/test/e2e/framework"
	_ "k8s.io/kubernetes/test/e2e/framework/config"
	_ "k8s.io/kubernetes/test/e2e/framework/debug/init"
	_ "k8s.io/kubernetes/test/e2e/framework/metrics/init"
	_ "k8s.io/kubernetes/test/e2e/framework/node/init"
	_ "k8s.io/kubernetes/test/e2e/framework/testfiles"
	_ "k8s.io/kubernetes/test/e2e/instrumentation"
	_ "k8s.io/kubernetes/test/e2e/invariants"
	_ "k8s.io/kubernetes/test/e2e/invariants/logcheck"
	_ "k8s.io/kubernetes/test/e2e/kubectl"
	_ "k8s.io/kubernetes/test/e2e/lifecycle"
	_ "k8s.io/kubernetes/test/e2e/lifecycle/bootstrap"
	_ "k8s.io/kubernetes/test/e2e/network"
	_ "k8s.io/kubernetes/test/e2e/node"
	_ "k8s.io/kubernetes/test/e2e/scheduling"
	_ "k8s.io/kubernetes/test/e2e/storage"
	_ "k8s.io/kubernetes/test/e2e/storage/csimock"
	_ "k8s.io/kubernetes/test/e2e/storage/external"
	_ "k8s.io/kubernetes/test/e2e/testing-manifests"
	_ "k8s.io/kubernetes/test/e2e/windows"
	_ "k8s.io/kubernetes/test/fixtures"
	_ "k8s.io/kubernetes/test/utils/format"
)
