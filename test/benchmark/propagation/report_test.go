package propagation

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/federation-v1/federation/pkg/localplane"
)

// row is one figure of one scenario, for the federation and the reference.
type row struct {
	Scenario string `json:"scenario"`
	Clusters int    `json:"clusters"`
	// Figure says what is measured, with its unit.
	Figure     string  `json:"figure"`
	Federation float64 `json:"federation"`
	Reference  float64 `json:"reference"`
	// Ratio is federation / reference.
	Ratio float64 `json:"ratio"`
}

// costRow is what the federation's programs spent over one scenario.
type costRow struct {
	Scenario string `json:"scenario"`
	Clusters int    `json:"clusters"`
	Program  string `json:"program"`
	usage
	// Copies the scenario wrote or deleted in the members (replicas for
	// the deployments scenario).
	Copies int `json:"copies"`
	// CPUMillisPerCopy is CPUSeconds per copy, in milliseconds.
	CPUMillisPerCopy float64 `json:"cpuMillisPerCopy"`
}

// report is everything a run measured.
type report struct {
	Date    time.Time `json:"date"`
	Machine string    `json:"machine"`
	Rows    []row     `json:"rows"`
	Cost    []costRow `json:"cost"`
	Notes   []string  `json:"notes,omitempty"`
}

func (bn *bench) add(scenario, figure string, fed, ref float64) {
	bn.rep.Rows = append(bn.rep.Rows, row{Scenario: scenario, Clusters: len(bn.clusters), Figure: figure,
		Federation: fed, Reference: ref, Ratio: fed / ref})
}

func (bn *bench) note(s string) { bn.rep.Notes = append(bn.rep.Notes, s) }

// meter starts measuring the controller manager and the federation apiserver.
func (bn *bench) meter() *meter {
	cm, api := bn.planePIDs()
	return startMeter(map[string]int{localplane.ControllerManager: cm, localplane.APIServer: api})
}

// cost records what the plane's programs spent since m started.
func (bn *bench) cost(scenario string, copies int, m *meter) {
	used, err := m.stop()
	if err != nil {
		bn.note(fmt.Sprintf("%s, %d clusters: %v", scenario, len(bn.clusters), err))
	}
	for _, program := range []string{localplane.ControllerManager, localplane.APIServer} {
		u := used[program]
		bn.rep.Cost = append(bn.rep.Cost, costRow{Scenario: scenario, Clusters: len(bn.clusters), Program: program,
			usage: u, Copies: copies, CPUMillisPerCopy: u.CPUSeconds * 1000 / float64(max(copies, 1))})
	}
}

// check stops the run on an error.
func (bn *bench) check(err error) {
	bn.b.Helper()
	if err != nil {
		bn.b.Fatalf("%d clusters: %v", len(bn.clusters), err)
	}
}

// machine describes where the run happened.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":"))
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf(", %.0f GiB", float64(kb)/(1<<20))
		}
	}
	return fmt.Sprintf("%d CPUs (%s)%s, %s/%s, %s", runtime.NumCPU(), model, mem, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// print writes the tables as Markdown.
func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "\n%s, %s\n\n", r.Date.UTC().Format("2006-01-02 15:04 MST"), r.Machine)
	fmt.Fprintf(w, "| scenario | N | figure | federation | reference | ratio |\n|---|---|---|---|---|---|\n")
	for _, x := range r.Rows {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %.2f |\n", x.Scenario, x.Clusters, x.Figure, num(x.Federation), num(x.Reference), x.Ratio)
	}
	fmt.Fprintf(w, "\n| scenario | N | program | CPU s | CPU ms per copy | peak RSS MiB |\n|---|---|---|---|---|---|\n")
	for _, c := range r.Cost {
		fmt.Fprintf(w, "| %s | %d | %s | %.1f | %.2f | %.0f |\n", c.Scenario, c.Clusters, c.Program, c.CPUSeconds, c.CPUMillisPerCopy, c.PeakRSSMiB)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "\n- %s", n)
	}
	fmt.Fprintln(w)
}

func num(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// write saves the report as JSON in path.
func (r *report) write(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
