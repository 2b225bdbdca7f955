package conformance_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/federation-v1/federation/test/memberenv"
)

// e2eTest returns Kubernetes' e2e.test at the served version and the
// ginkgo command that runs it, building them the first time (e2e.test
// several minutes; it says every 30 s that it still is).
func e2eTest(t *testing.T) memberenv.E2ETest {
	t.Helper()
	root, err := memberenv.RepoRoot()
	require.NoError(t, err)
	start := time.Now()
	e2e, err := memberenv.EnsureE2ETest(context.Background(), root, t.Logf)
	require.NoError(t, err)
	t.Logf("e2e.test is %s, ginkgo %s (ready in %s)", e2e.E2ETest, e2e.Ginkgo, time.Since(start).Round(time.Second))
	return e2e
}

// conformanceTests lists e2e.test's conformance tests.
func conformanceTests(t *testing.T, e2e string) []conformanceTest {
	t.Helper()
	cmd := exec.Command(e2e, "--list-conformance-tests")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+cmd.Dir)
	out, err := cmd.Output()
	require.NoError(t, err, "e2e.test --list-conformance-tests")
	var tests []conformanceTest
	require.NoError(t, yaml.Unmarshal(out, &tests))
	require.NotEmpty(t, tests)
	return tests
}

// e2eLogs makes the folder of a run's log and report, kept when the run
// fails: in $FEDENV_LOGS, or the system temporary folder.
func e2eLogs(t *testing.T) string {
	root := os.Getenv("FEDENV_LOGS")
	if root == "" {
		root = os.TempDir()
	}
	require.NoError(t, os.MkdirAll(root, 0o755))
	dir, err := os.MkdirTemp(root, "federation-conformance-")
	require.NoError(t, err)
	return dir
}
