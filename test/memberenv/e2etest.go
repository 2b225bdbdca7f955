package memberenv

import (
	"context"
)

// e2eTest is Kubernetes' end-to-end test binary at the members' version,
// which the conformance suite runs against the federation. It is not in
// tools: only that suite needs it, and it is the longest build.
var e2eTest = tool{
	dir: "kubernetes", name: "kubernetes-e2e", module: "k8s.io/kubernetes",
	packages: []string{"k8s.io/kubernetes/test/e2e"}, test: true,
	// Without it e2e.test says it is v0.0.0-master.
	versionVar: "k8s.io/component-base/version.gitVersion",
}

// ginkgoCLI is ginkgo's command at the version compiled into e2e.test (the
// same tools module): only it runs e2e.test's tests in parallel processes,
// whose protocol must match the library's.
var ginkgoCLI = tool{
	dir: "kubernetes", name: "ginkgo", module: "github.com/onsi/ginkgo/v2",
	packages: []string{"github.com/onsi/ginkgo/v2/ginkgo"},
}

// E2ETest is where the conformance suite's programs are.
type E2ETest struct {
	// E2ETest is Kubernetes' e2e.test.
	E2ETest string
	// Ginkgo is the ginkgo command that runs it in parallel.
	Ginkgo string
}

// EnsureE2ETest builds Kubernetes' e2e.test and the ginkgo command unless
// they are cached (root/.cache/bin/kubernetes-e2e-<version>/e2e.test,
// root/.cache/bin/ginkgo-<version>/ginkgo) and returns their paths.
func EnsureE2ETest(ctx context.Context, root string, logf func(string, ...any)) (E2ETest, error) {
	cache, unlock, err := lockCache(root)
	if err != nil {
		return E2ETest{}, err
	}
	defer unlock()
	e2e, err := ensureBinary(ctx, root, cache, e2eTest, logf)
	if err != nil {
		return E2ETest{}, err
	}
	ginkgo, err := ensureBinary(ctx, root, cache, ginkgoCLI, logf)
	if err != nil {
		return E2ETest{}, err
	}
	return E2ETest{E2ETest: e2e, Ginkgo: ginkgo}, nil
}
