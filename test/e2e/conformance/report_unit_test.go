package conformance_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run whose setup failed (as when default/kubernetes is missing) has
// its tests skipped and the setup node failed: the report must say both,
// so that the suite fails and names the cause.
func TestReadReportOfFailedSetup(t *testing.T) {
	report := `[{"SpecReports": [
	  {"LeafNodeType": "SynchronizedBeforeSuite", "State": "failed", "RunTime": 1000000,
	   "Failure": {"Message": "Failed to get kubernetes service ClusterIP: services \"kubernetes\" not found",
	               "Location": {"FileName": "test/e2e/e2e.go", "LineNumber": 122}}},
	  {"ContainerHierarchyTexts": ["[sig-node] ConfigMap"], "LeafNodeText": "should update ConfigMap successfully [NodeConformance] [Conformance]",
	   "LeafNodeType": "It", "State": "skipped"},
	  {"ContainerHierarchyTexts": ["[sig-api-machinery] server version"], "LeafNodeText": "should find the server version [Conformance]",
	   "LeafNodeType": "It", "State": "passed", "RunTime": 150000000},
	  {"LeafNodeType": "ReportAfterSuite", "LeafNodeText": "Kubernetes e2e suite report", "State": "passed"}
	]}]`
	path := filepath.Join(t.TempDir(), "report.json")
	require.NoError(t, os.WriteFile(path, []byte(report), 0o644))
	tests, suiteFailures, err := readReport(path)
	require.NoError(t, err)

	require.Len(t, suiteFailures, 1)
	assert.Equal(t, "SynchronizedBeforeSuite", suiteFailures[0].LeafNodeType)
	assert.Equal(t, `Failed to get kubernetes service ClusterIP: services "kubernetes" not found at test/e2e/e2e.go:122`, suiteFailures[0].failure())

	update := "[sig-node] ConfigMap should update ConfigMap successfully [NodeConformance] [Conformance]"
	version := "[sig-api-machinery] server version should find the server version [Conformance]"
	assert.Equal(t, "skipped", tests[update].State)
	assert.Equal(t, "passed", tests[version].State)

	out := table([]string{update, version, "[sig-x] absent [Conformance]"}, tests)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 5, out)
	assert.Regexp(t, `^\[sig-api-machinery\] server version .*passed\s+150ms$`, lines[1], "slowest first")
	assert.Regexp(t, `skipped\s+0s$`, lines[2])
	assert.Regexp(t, `not run\s+0s$`, lines[3])
	assert.Regexp(t, `^3 tests\s+150ms$`, lines[4])
}

// The focus selects exactly the chosen tests: each name matches, and a
// test whose name only shares a prefix with a chosen one does not.
func TestFocusSelectsTheChosen(t *testing.T) {
	re := regexp.MustCompile(focus())
	for _, name := range chosen {
		assert.Regexp(t, re, name)
	}
	assert.NotRegexp(t, re, "[sig-node] ConfigMap should be consumable via environment variable [NodeConformance] [Conformance]")
	assert.NotRegexp(t, re, "[sig-api-machinery] Discovery should locate the groupVersion and a resource within each APIGroup [Conformance]")
}

// A chosen test wins over its file's exclusion; an exclusion with a name
// takes only the tests it names; a test of a file nothing covers is
// undecided, and so is a chosen name e2e.test no longer has.
func TestDecide(t *testing.T) {
	isChosen, _, ok := decide(conformanceTest{File: "test/e2e/common/node/configmap.go",
		Codename: "[sig-node] ConfigMap should update\n    ConfigMap successfully [NodeConformance] [Conformance]"})
	assert.True(t, ok)
	assert.True(t, isChosen, "chosen, though common/node is excluded, and whitespace normalised")

	isChosen, why, ok := decide(conformanceTest{File: "test/e2e/apimachinery/namespace.go",
		Codename: "[sig-api-machinery] Namespaces [Serial] should ensure that all services are removed when a namespace is deleted [Conformance]"})
	assert.True(t, ok)
	assert.False(t, isChosen)
	assert.Contains(t, why, "ServiceAccount")

	_, _, ok = decide(conformanceTest{File: "test/e2e/apimachinery/namespace.go", Codename: "[sig-api-machinery] Namespaces something new [Conformance]"})
	assert.False(t, ok, "namespace.go is excluded only by name")

	problems := undecided([]conformanceTest{{File: "test/e2e/new/thing.go", Codename: "[sig-new] a new test [Conformance]"}})
	assert.Contains(t, problems, "[sig-new] a new test [Conformance] (test/e2e/new/thing.go) is neither chosen nor excluded")
	assert.Len(t, problems, 1+len(chosen), "and every chosen name is missing from that list")
}

// A [Serial] test ran alone when no test that ran overlapped its run; a
// skipped one never ran.
func TestBesideFindsTheTestsThatOverlapped(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 11, 28, 0, 0, s, 0, time.UTC) }
	tests := map[string]specReport{
		"serial":        {State: "passed", StartTime: at(10), EndTime: at(20)},
		"before":        {State: "passed", StartTime: at(0), EndTime: at(10)},
		"after":         {State: "passed", StartTime: at(20), EndTime: at(30)},
		"skipped":       {State: "skipped"},
		"ends inside":   {State: "passed", StartTime: at(5), EndTime: at(11)},
		"starts inside": {State: "failed", StartTime: at(19), EndTime: at(25)},
	}
	assert.Equal(t, []string{"ends inside", "starts inside"}, beside("serial", tests))
	assert.Empty(t, beside("after", map[string]specReport{"after": tests["after"], "serial": tests["serial"]}))
}
