package propagation

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/federation-v1/federation/pkg/processplane"
)

// row is one figure of one scenario, for the federation and the reference.
type row struct {
	Scenario string `json:"scenario"`
	Clusters int    `json:"clusters"`
	// Figure says what is measured, with its unit.
	Figure     string  `json:"figure"`
	Federation float64 `json:"federation"`
	Reference  float64 `json:"reference"`
	// Ratio is federation / reference. With several rounds, each figure is
	// the median over the rounds, the ratio the median of the rounds'
	// ratios (each round measures the reference and the federation one
	// right after the other).
	Ratio float64 `json:"ratio"`
	// Rounds holds every round's figures when there was more than one.
	Rounds []round `json:"rounds,omitempty"`
}

// round is one measurement of a figure.
type round struct {
	Federation float64 `json:"federation"`
	Reference  float64 `json:"reference"`
	Ratio      float64 `json:"ratio"`
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
	// Rounds is how many rounds the medians are of.
	Rounds  int     `json:"rounds"`
	samples []usage // one per round
}

// report is everything a run measured.
type report struct {
	Date    time.Time `json:"date"`
	Machine string    `json:"machine"`
	Rows    []row     `json:"rows"`
	Cost    []costRow `json:"cost"`
	// Scale is the object-count axis (scale_test.go).
	Scale []scaleRow `json:"scale,omitempty"`
	// Members is the member-count axis (members_test.go).
	Members []memberRow `json:"members,omitempty"`
	Notes   []string    `json:"notes,omitempty"`
}

// add records one round of a figure.
func (bn *bench) add(scenario, figure string, fed, ref float64) {
	r := round{Federation: fed, Reference: ref, Ratio: fed / ref}
	i := slices.IndexFunc(bn.rep.Rows, func(x row) bool {
		return x.Scenario == scenario && x.Clusters == len(bn.clusters) && x.Figure == figure
	})
	if i < 0 {
		bn.rep.Rows = append(bn.rep.Rows, row{Scenario: scenario, Clusters: len(bn.clusters), Figure: figure,
			Federation: fed, Reference: ref, Ratio: r.Ratio})
		return
	}
	x := &bn.rep.Rows[i]
	if len(x.Rounds) == 0 {
		x.Rounds = []round{{Federation: x.Federation, Reference: x.Reference, Ratio: x.Ratio}}
	}
	x.Rounds = append(x.Rounds, r)
	x.Federation = median(x.Rounds, func(r round) float64 { return r.Federation })
	x.Reference = median(x.Rounds, func(r round) float64 { return r.Reference })
	x.Ratio = median(x.Rounds, func(r round) float64 { return r.Ratio })
}

// median is the median of f over xs (the mean of the middle two for an
// even count).
func median[T any](xs []T, f func(T) float64) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func (bn *bench) note(s string) { bn.rep.Notes = append(bn.rep.Notes, s) }

// meter starts measuring the controller manager and the federation apiserver.
func (bn *bench) meter() *meter {
	cm, api := bn.planePIDs()
	return startMeter(map[string]int{processplane.ControllerManager: cm, processplane.APIServer: api})
}

// cost records what the plane's programs spent since m started.
func (bn *bench) cost(scenario string, copies int, m *meter) {
	used, err := m.stop()
	if err != nil {
		bn.note(fmt.Sprintf("%s, %d clusters: %v", scenario, len(bn.clusters), err))
	}
	for _, program := range []string{processplane.ControllerManager, processplane.APIServer} {
		bn.addCost(costRow{Scenario: scenario, Clusters: len(bn.clusters), Program: program, usage: used[program], Copies: copies})
	}
}

// addCost records one round of a program's cost: the medians over the
// rounds so far.
func (bn *bench) addCost(c costRow) {
	i := slices.IndexFunc(bn.rep.Cost, func(o costRow) bool {
		return o.Scenario == c.Scenario && o.Clusters == c.Clusters && o.Program == c.Program
	})
	if i < 0 {
		bn.rep.Cost = append(bn.rep.Cost, c)
		i = len(bn.rep.Cost) - 1
	}
	x := &bn.rep.Cost[i]
	x.samples = append(x.samples, c.usage)
	x.Rounds = len(x.samples)
	x.CPUSeconds = median(x.samples, func(u usage) float64 { return u.CPUSeconds })
	x.PeakRSSMiB = median(x.samples, func(u usage) float64 { return u.PeakRSSMiB })
	x.CPUMillisPerCopy = x.CPUSeconds * 1000 / float64(max(x.Copies, 1))
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
	// A run of the scale scenario alone has neither of the first two.
	if len(r.Rows) > 0 {
		fmt.Fprintf(w, "| scenario | N | figure | federation | reference | ratio |\n|---|---|---|---|---|---|\n")
	}
	for _, x := range r.Rows {
		ratio := fmt.Sprintf("%.2f", x.Ratio)
		if len(x.Rounds) > 1 {
			ratio += fmt.Sprintf(" (%.2f–%.2f, %d rounds)", slices.MinFunc(x.Rounds, byRatio).Ratio, slices.MaxFunc(x.Rounds, byRatio).Ratio, len(x.Rounds))
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s |\n", x.Scenario, x.Clusters, x.Figure, num(x.Federation), num(x.Reference), ratio)
	}
	if len(r.Cost) > 0 {
		fmt.Fprintf(w, "\n| scenario | N | program | CPU s | CPU ms per copy | peak RSS MiB |\n|---|---|---|---|---|---|\n")
	}
	for _, c := range r.Cost {
		fmt.Fprintf(w, "| %s | %d | %s | %.1f | %.2f | %.0f |\n", c.Scenario, c.Clusters, c.Program, c.CPUSeconds, c.CPUMillisPerCopy, c.PeakRSSMiB)
	}
	r.printScale(w)
	r.printMembers(w)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "\n- %s", n)
	}
	fmt.Fprintln(w)
}

func byRatio(a, b round) int { return cmp.Compare(a.Ratio, b.Ratio) }

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
