package conformance_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/test/fedenv"
	"github.com/federation-v1/federation/test/kubectl"
	"github.com/federation-v1/federation/test/memberenv"
)

// runBound bounds the run of the chosen tests; they take about 1.5 minutes
// in procs processes.
const runBound = 20 * time.Minute

// Every conformance test of this Kubernetes version is either chosen or
// excluded with a reason, and every chosen test exists: a new version's
// tests get decided, not silently dropped.
func TestConformanceSelection(t *testing.T) {
	if testing.Short() {
		t.Skip("builds e2e.test")
	}
	tests := conformanceTests(t, e2eTest(t).E2ETest)
	assert.Empty(t, undecided(tests))
	reasons := map[string]int{}
	for _, c := range tests {
		if isChosen, why, _ := decide(c); !isChosen {
			reasons[why]++
		}
	}
	t.Logf("%d conformance tests: %d chosen, %d excluded", len(tests), len(chosen), len(tests)-len(chosen))
	for why, n := range reasons {
		t.Logf("%4d excluded: %s", n, why)
	}
}

// TestConformance runs the chosen conformance tests against a federation
// joined to three member clusters; each must pass.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("builds e2e.test and starts member clusters")
	}
	e2e := e2eTest(t) // first: a long build should not hold clusters up
	start := time.Now()
	u := fedenv.NewUser(t, binDir)
	fedenv.WithMembers(t, u, memberenv.DefaultClusters(3, 1))
	u.InitFederation("fed")
	u.JoinAll("fed", "cluster1", "cluster2", "cluster3")
	t.Logf("setting up took %s", time.Since(start).Round(time.Second))

	t.Run("kubectl auth can-i and whoami", func(t *testing.T) { kubectlAuth(t, u) })

	if explore := os.Getenv("CONFORMANCE_FOCUS"); explore != "" {
		t.Run("explore "+explore, func(t *testing.T) { exploreE2E(t, e2e, u, explore) })
		return
	}

	t.Run("chosen conformance tests pass", func(t *testing.T) {
		logs := e2eLogs(t)
		report := filepath.Join(logs, "report.json")
		log := filepath.Join(logs, "e2e.log")
		took, err := runE2E(e2e, u, focus(), report, log)
		t.Logf("e2e.test took %s for the %d chosen tests; its log, kept if one fails: %s", took.Round(time.Second), len(chosen), log)
		tests, suiteFailures, rerr := readReport(report)
		require.NoError(t, rerr, "e2e.test: %v; see %s", err, log)
		t.Logf("results, slowest first:\n%s", table(chosen, tests))
		for _, s := range suiteFailures {
			t.Errorf("e2e.test's %s %s: %s", s.LeafNodeType, s.State, s.failure())
		}
		for _, name := range chosen {
			s, ok := tests[name]
			if !assert.True(t, ok, "%s did not run", name) {
				continue
			}
			assert.Equal(t, "passed", s.State, "%s: %s", name, s.failure())
			if strings.Contains(name, "[Serial]") {
				assert.Empty(t, beside(name, tests), "%s must run alone", name)
			}
		}
		if !t.Failed() {
			_ = os.RemoveAll(logs)
		}
	})
}

// exploreE2E runs the tests that focus (a ginkgo regular expression)
// selects instead of the chosen ones and prints their results without
// judging them: to see how far excluded tests get.
func exploreE2E(t *testing.T, e2e memberenv.E2ETest, u *fedenv.User, focus string) {
	logs := e2eLogs(t)
	report, log := filepath.Join(logs, "report.json"), filepath.Join(logs, "e2e.log")
	took, err := runE2E(e2e, u, focus, report, log)
	tests, suiteFailures, rerr := readReport(report)
	require.NoError(t, rerr, "e2e.test: %v; see %s", err, log)
	var ran []string
	for name, s := range tests {
		if s.State != "skipped" {
			ran = append(ran, name)
		}
	}
	t.Logf("e2e.test ran %d tests in %s; its log is %s\n%s", len(ran), took.Round(time.Second), log, table(ran, tests))
	for _, name := range ran {
		if s := tests[name]; s.State != "passed" {
			t.Logf("%s: %s", name, s.failure())
		}
	}
	for _, s := range suiteFailures {
		t.Logf("e2e.test's %s %s: %s", s.LeafNodeType, s.State, s.failure())
	}
}

// procs is how many e2e.test processes share the chosen tests. Most of a
// test's time is waiting (a quota's count to settle for 15 s, a watch's
// 10 s between steps, the members' status), so more processes than CPUs
// pay; ginkgo still runs the [Serial] tests alone, after the others.
const procs = 6

// runE2E runs e2e.test's tests that focus selects as the federation's
// admin, in procs processes under ginkgo's command, and writes ginkgo's
// JSON report (all processes' specs) to report and its output to log.
func runE2E(e2e memberenv.E2ETest, u *fedenv.User, focus, report, log string) (time.Duration, error) {
	out, err := os.Create(log)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	// ginkgo runs a compiled suite in the suite's folder: a link in the
	// run's folder keeps e2e.test out of the shared cache's.
	dir := filepath.Dir(report)
	link := filepath.Join(dir, filepath.Base(e2e.E2ETest))
	if err := os.Symlink(e2e.E2ETest, link); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), runBound+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e2e.Ginkgo, "run", "--procs="+strconv.Itoa(procs),
		"--focus="+focus, "--no-color", "-v",
		"--timeout="+runBound.String(), "--output-dir="+dir, "--json-report="+filepath.Base(report),
		link, "--",
		"--kubeconfig="+u.Kubeconfig, "--context=fed", "--provider=skeleton",
		"--kubectl-path="+kubectl.Default,
		// The federation has no nodes and no kube-system pods: the suite
		// must not wait for them (e2e.go's setupSuite) ...
		"--allowed-not-ready-nodes=-1", "--num-nodes=0",
		// ... nor for a default ServiceAccount in each test namespace
		// (framework.go's BeforeEach): the federation makes none.
		"--e2e-verify-service-account=false",
		// A failure's dump lists pods and nodes, which are not served.
		"--dump-logs-on-failure=false")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+u.Home, "KUBECONFIG=")
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	err = cmd.Run()
	if err != nil {
		err = fmt.Errorf("ginkgo run e2e.test: %w", err)
	}
	return time.Since(start), err
}
