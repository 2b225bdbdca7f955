package propagation

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/federation-v1/federation/test/fedenv"
)

// BenchmarkPropagation runs the scenarios for each -clusters count, each
// against a new federation and new members, prints the tables and writes
// the JSON. The workload is fixed: run it once, with -benchtime 1x.
func BenchmarkPropagation(b *testing.B) {
	requireTools(b)
	counts, err := parseCounts(*clustersFlag)
	if err != nil {
		b.Fatal(err)
	}
	scenarios, err := parseScenarios(*scenariosFlag)
	if err != nil {
		b.Fatal(err)
	}
	if *roundsFlag < 1 {
		b.Fatalf("-rounds %d: at least one round", *roundsFlag)
	}
	rep, out, bin := startReport(b, "propagation.json", (*report).print)
	if !slices.ContainsFunc(allScenarios, func(s string) bool { return scenarios[s] }) {
		counts = nil // the object-count axis alone
	}
	for _, n := range counts {
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			bn := setUp(b, bin, n)
			bn.rep = rep
			bn.withControllerManagerFlags()
			ctx := context.Background()
			for _, s := range allScenarios {
				if !scenarios[s] {
					continue
				}
				start := time.Now()
				switch s {
				case scenarioBurst:
					// Rounds of burst then deletion: the deletion clears
					// the way for the next burst, measured or not.
					for r := 1; r <= *roundsFlag; r++ {
						bn.burst(ctx)
						if scenarios[scenarioDelete] || r < *roundsFlag {
							bn.deletion(ctx, scenarios[scenarioDelete])
						}
					}
					bn.noteQuiet()
				case scenarioDelete:
					continue // with the burst
				case scenarioSteady:
					bn.steady(ctx, *steadyFor, steadyRate)
				case scenarioDeployments:
					bn.deployments(ctx)
				}
				fmt.Printf("clusters=%d: %s done in %s\n", n, s, time.Since(start).Round(time.Second))
				// The figures so far, in case the run is cut short.
				if err := rep.write(out); err != nil {
					b.Errorf("writing %s: %v", out, err)
				}
			}
		})
	}
	if scenarios[scenarioAgent] {
		// Its own federation: a pushed member and an agent member.
		b.Run(scenarioAgent, func(b *testing.B) { runAgent(b, bin, rep) })
		if err := rep.write(out); err != nil {
			b.Errorf("writing %s: %v", out, err)
		}
	}
	if scenarios[scenarioMembers] {
		// The member-count axis starts federations of its own.
		b.Run(scenarioMembers, func(b *testing.B) { runMembers(b, bin, rep, out) })
	}
	if scenarios[scenarioScale] {
		// The object-count axis starts federations of its own.
		b.Run(scenarioScale, func(b *testing.B) { runScale(b, bin, rep, out) })
	}
}

// eachCount runs one count of an axis after the other, each as the
// sub-benchmark axis=N on a federation of its own made by start, measured by
// measure, the figures written to out after each.
func eachCount(b *testing.B, axis string, counts []int, rep *report, out string,
	start func(b *testing.B, n int) *bench, measure func(bn *bench, ctx context.Context, n int)) {
	for _, n := range counts {
		b.Run(fmt.Sprintf("%s=%d", axis, n), func(b *testing.B) {
			begun := time.Now()
			bn := start(b, n)
			bn.rep = rep
			bn.withControllerManagerFlags()
			measure(bn, context.Background(), n)
			fmt.Printf("%s=%d: done in %s\n", axis, n, time.Since(begun).Round(time.Second))
			if err := rep.write(out); err != nil {
				b.Errorf("writing %s: %v", out, err)
			}
		})
	}
}

// startReport builds the federation's binaries and returns them with the
// report of a benchmark, which print shows and which is written to -out
// (default: file in the module's .run/bench) when the benchmark ends.
func startReport(b *testing.B, file string, print func(*report, io.Writer)) (rep *report, out, bin string) {
	out = *outFlag
	if out == "" {
		out = filepath.Join(moduleRoot(b), ".run", "bench", file)
	}
	bin, err := fedenv.BuildBinaries(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	rep = &report{Date: time.Now(), Machine: machine()}
	b.Cleanup(func() {
		print(rep, os.Stdout)
		if err := rep.write(out); err != nil {
			b.Errorf("writing %s: %v", out, err)
		} else {
			fmt.Printf("figures written to %s\n", out)
		}
	})
	return rep, out, bin
}
