package propagation

import (
	"fmt"
	"slices"
	"time"
)

// A phase starts once the machine is quiet: at least quietIdle of its CPU
// idle over a quietWindow, waiting at most quietWait, so that no phase pays
// for what the one before left running (the members catching up with
// 10,000 writes or deletions). At N=10 the wait is 1 to 2 s; it mattered
// for the reference's deletion right after the limit phase's clean-up.
const (
	quietIdle   = 0.6
	quietWindow = time.Second
	quietWait   = 45 * time.Second
)

// idleShare is the idle share of the machine's CPU between two readings.
func idleShare(from, to machineCPU) float64 {
	total := (to.user - from.user) + (to.kernel - from.kernel) + (to.steal - from.steal) + (to.idle - from.idle)
	if total <= 0 {
		return 0
	}
	return (to.idle - from.idle) / total
}

// quiet waits until the machine is quiet before the phase what, and notes
// how long that took.
func (bn *bench) quiet(what string) {
	start := time.Now()
	prev, err := readMachineCPU()
	bn.check(err)
	tick := time.NewTicker(quietWindow)
	defer tick.Stop()
	share := 0.0
	for range tick.C {
		cur, err := readMachineCPU()
		bn.check(err)
		share, prev = idleShare(prev, cur), cur
		if share >= quietIdle {
			bn.quietFor = append(bn.quietFor, time.Since(start))
			return
		}
		if time.Since(start) >= quietWait {
			break
		}
	}
	bn.note(fmt.Sprintf("N=%d, before %s: the machine was still busy after %s (idle %.0f%% over the last second); measured anyway",
		len(bn.clusters), what, quietWait, 100*share))
}

// noteQuiet notes how long the phases so far waited for a quiet machine.
func (bn *bench) noteQuiet() {
	if len(bn.quietFor) == 0 {
		return
	}
	waits := slices.Sorted(slices.Values(bn.quietFor))
	bn.note(fmt.Sprintf("N=%d: %d phases started once the machine was at least %.0f%% idle for a second, after %.1f s (median; %.1f to %.1f s)",
		len(bn.clusters), len(waits), 100*quietIdle, median(waits, time.Duration.Seconds), waits[0].Seconds(), waits[len(waits)-1].Seconds()))
	bn.quietFor = nil
}
