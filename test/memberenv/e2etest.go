package memberenv

import (
	"context"
	"os"
	"path/filepath"
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

// EnsureE2ETest builds Kubernetes' e2e.test unless it is cached
// (root/.cache/bin/kubernetes-e2e-<version>/e2e.test) and returns its path.
func EnsureE2ETest(ctx context.Context, root string, logf func(string, ...any)) (string, error) {
	cache := filepath.Join(root, ".cache", "bin")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(filepath.Join(cache, ".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	dir, err := ensureTool(ctx, root, cache, e2eTest, logf)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, e2eTest.binary(e2eTest.packages[0])), nil
}
