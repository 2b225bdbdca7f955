package conformance_test

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// specReport is what this suite reads of one entry of ginkgo's JSON
// report (ginkgo run --json-report), a types.SpecReport.
type specReport struct {
	ContainerHierarchyTexts []string
	LeafNodeText            string
	// LeafNodeType is "It" for a test, or a suite node such as
	// "SynchronizedBeforeSuite".
	LeafNodeType string
	// State is "passed", "failed", "skipped", "panicked", "timedout", ...
	State              string
	StartTime, EndTime time.Time
	RunTime            time.Duration
	Failure            struct {
		Message  string
		Location struct {
			FileName   string
			LineNumber int
		}
	}
}

// name is the test's full text, as in --list-conformance-tests.
func (s specReport) name() string {
	return normalise(strings.Join(append(append([]string{}, s.ContainerHierarchyTexts...), s.LeafNodeText), " "))
}

// failure says where and why a spec failed, on one line of bounded length.
func (s specReport) failure() string {
	msg := normalise(s.Failure.Message)
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return fmt.Sprintf("%s at %s:%d", msg, s.Failure.Location.FileName, s.Failure.Location.LineNumber)
}

// readReport reads ginkgo's JSON report: the tests by name, and the suite
// nodes (setup, reports) that did not pass.
func readReport(path string) (tests map[string]specReport, suiteFailures []specReport, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading e2e.test's report: %w", err)
	}
	var suites []struct{ SpecReports []specReport }
	if err := json.Unmarshal(data, &suites); err != nil {
		return nil, nil, fmt.Errorf("parsing e2e.test's report %s: %w", path, err)
	}
	tests = map[string]specReport{}
	for _, suite := range suites {
		for _, s := range suite.SpecReports {
			switch {
			case s.LeafNodeType == "It":
				if s.State != "skipped" || tests[s.name()].State == "" {
					tests[s.name()] = s
				}
			case s.State != "passed":
				suiteFailures = append(suiteFailures, s)
			}
		}
	}
	return tests, suiteFailures, nil
}

// beside returns the tests that ran while the test name did, by their
// start and end (ginkgo's report does not say which were [Serial]).
func beside(name string, tests map[string]specReport) []string {
	s := tests[name]
	var others []string
	for other, o := range tests {
		if other != name && o.State != "skipped" && o.StartTime.Before(s.EndTime) && s.StartTime.Before(o.EndTime) {
			others = append(others, other)
		}
	}
	sort.Strings(others)
	return others
}

// table prints the chosen tests' results, slowest first: test, result,
// duration.
func table(names []string, tests map[string]specReport) string {
	sorted := append([]string{}, names...)
	sort.SliceStable(sorted, func(i, j int) bool { return tests[sorted[i]].RunTime > tests[sorted[j]].RunTime })
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	fmt.Fprintln(w, "TEST\tRESULT\tDURATION")
	var total time.Duration
	for _, name := range sorted {
		s, ok := tests[name]
		state := s.State
		if !ok {
			state = "not run"
		}
		total += s.RunTime
		fmt.Fprintf(w, "%s\t%s\t%s\n", name, state, s.RunTime.Round(10*time.Millisecond))
	}
	fmt.Fprintf(w, "%d tests\t\t%s\n", len(names), total.Round(10*time.Millisecond))
	_ = w.Flush()
	return b.String()
}
