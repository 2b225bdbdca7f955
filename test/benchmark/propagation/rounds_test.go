package propagation

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRoundsAreReportedAsMedians(t *testing.T) {
	bn := &bench{clusters: []string{"c1", "c2"}, rep: &report{}}
	for _, r := range [][2]float64{{20, 10}, {30, 10}, {12, 10}} {
		bn.add(scenarioBurst, "seconds", r[0], r[1])
		bn.addCost(costRow{Scenario: scenarioBurst, Clusters: 2, Program: "cm", usage: usage{CPUSeconds: r[0] / 10, PeakRSSMiB: 100}, Copies: 2000})
	}
	bn.add(scenarioDelete, "seconds", 5, 10)

	require.Len(t, bn.rep.Rows, 2, "one row per figure, whatever the rounds")
	burst := bn.rep.Rows[0]
	assert.Len(t, burst.Rounds, 3)
	assert.InDelta(t, 20, burst.Federation, 1e-9, "median of 20, 30, 12")
	assert.InDelta(t, 2.0, burst.Ratio, 1e-9, "median of the rounds' ratios")
	assert.Empty(t, bn.rep.Rows[1].Rounds, "a single round lists no rounds")
	assert.InDelta(t, 0.5, bn.rep.Rows[1].Ratio, 1e-9)

	require.Len(t, bn.rep.Cost, 1)
	assert.Equal(t, 3, bn.rep.Cost[0].Rounds)
	assert.InDelta(t, 2.0, bn.rep.Cost[0].CPUSeconds, 1e-9)
	assert.InDelta(t, 1.0, bn.rep.Cost[0].CPUMillisPerCopy, 1e-9, "2 s over 2000 copies")

	var out bytes.Buffer
	bn.rep.print(&out)
	assert.Contains(t, out.String(), "| 2.00 (1.20–3.00, 3 rounds) |")
}

func TestMedianOfAnEvenCount(t *testing.T) {
	assert.InDelta(t, 2.5, median([]float64{4, 1, 2, 3}, func(v float64) float64 { return v }), 1e-9)
}

func TestTheMachinesCPUTimeOnlyGrows(t *testing.T) {
	first, err := readMachineCPU()
	require.NoError(t, err)
	assert.Positive(t, first.user+first.kernel+first.idle, "a machine that ran has CPU time")
	second, err := readMachineCPU()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, second.user, first.user)
	assert.GreaterOrEqual(t, second.kernel, first.kernel)
	assert.GreaterOrEqual(t, second.idle, first.idle)
	assert.GreaterOrEqual(t, second.steal, first.steal)
}

func TestAGroupMeterSumsItsProcessesByName(t *testing.T) {
	m := startGroupMeter(map[string][]int{"self": {os.Getpid()}, "gone": {-1}})
	busy := 0
	for i := range 50_000_000 {
		busy += i % 7
	}
	assert.Positive(t, busy)
	assert.Regexp(t, `^gone 0\.0, self \d+\.\d CPU s$`, m.String())
}

func TestIdleShareIsIdleTimeOverAllTime(t *testing.T) {
	from := machineCPU{user: 10, kernel: 5, steal: 1, idle: 100}
	assert.InDelta(t, 0.75, idleShare(from, machineCPU{user: 10.3, kernel: 5.1, steal: 1.1, idle: 101.5}), 1e-9, "1.5 idle of 2 s")
	assert.InDelta(t, 0.0, idleShare(from, from), 1e-9, "no time passed: not idle")
}
