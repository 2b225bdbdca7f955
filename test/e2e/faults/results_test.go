package faults_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/federation-v1/federation/test/memberenv"
)

// result is one row of the matrix.
type result struct {
	Case string
	// Objects says what was written in the case's namespace.
	Objects string
	// Verdict is the verifier's last; nil when it never read everything.
	Verdict *verdict
	Retries int64
	// Converge is from the later of the fault's end and the last
	// acknowledged write to the first pass that found nothing wrong; 0
	// when none did.
	Converge time.Duration
	// Total is the case from its namespace's creation to that pass.
	Total time.Duration
	// Notes are the case's own measurements (a takeover, a downtime).
	Notes []string
}

func (r *result) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

func seconds(d time.Duration) string {
	if d == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// thousands writes n with a comma between thousands, as the docs do.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// table renders the results as Markdown: the matrix, then each case's notes.
func table(results []*result) string {
	var b strings.Builder
	b.WriteString("| case | objects | lost | duplicated | retries | time to converge | case time |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		lost, dup := "—", "—"
		if r.Verdict != nil {
			lost, dup = fmt.Sprint(r.Verdict.Lost), fmt.Sprint(r.Verdict.Duplicated)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %s | %s |\n", r.Case, r.Objects, lost, dup, r.Retries, seconds(r.Converge), seconds(r.Total))
	}
	b.WriteString("\n")
	for _, r := range results {
		if len(r.Notes) > 0 {
			fmt.Fprintf(&b, "- %s: %s.\n", r.Case, strings.Join(r.Notes, "; "))
		}
	}
	return b.String()
}

// writeResults writes the table, with when, where and from which commit it
// was measured, to .run/faults/results.md in the project.
func writeResults(results []*result, started time.Time, version string) (string, error) {
	root, err := memberenv.RepoRoot()
	if err != nil {
		return "", err
	}
	path := filepath.Join(root, ".run", "faults", "results.md")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	header := fmt.Sprintf("Fault matrix run on %s (%s in all), federation %s, %d CPUs, %s/%s.\n\n",
		started.UTC().Format("2006-01-02 15:04 MST"), time.Since(started).Round(time.Second), version,
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	return path, os.WriteFile(path, []byte(header+table(results)), 0o644)
}
