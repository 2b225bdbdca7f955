package propagation

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc/PID/stat.
const clockTicks = 100

// usage is what one process spent over a scenario.
type usage struct {
	CPUSeconds float64 `json:"cpuSeconds"`
	// PeakRSSMiB is the peak resident memory over the scenario (since
	// process start when the kernel refused to reset it).
	PeakRSSMiB float64 `json:"peakRSSMiB"`
}

// meter measures processes between start and stop.
type meter struct {
	pids map[string]int
	cpu  map[string]float64
	errs []error
}

// startMeter notes the processes' CPU time and resets their peak RSS.
func startMeter(pids map[string]int) *meter {
	m := &meter{pids: pids, cpu: map[string]float64{}}
	for name, pid := range pids {
		cpu, err := cpuSeconds(pid)
		if err != nil {
			m.errs = append(m.errs, err)
		}
		m.cpu[name] = cpu
		// 5 resets VmHWM to the current RSS (Linux 4.0 and later).
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
			m.errs = append(m.errs, fmt.Errorf("resetting the peak RSS of %s: %w", name, err))
		}
	}
	return m
}

// stop returns each process's CPU seconds since start and its peak RSS.
func (m *meter) stop() (map[string]usage, error) {
	out := map[string]usage{}
	for name, pid := range m.pids {
		cpu, err := cpuSeconds(pid)
		if err != nil {
			return nil, err
		}
		hwm, err := statusKB(pid, "VmHWM:")
		if err != nil {
			return nil, err
		}
		out[name] = usage{CPUSeconds: cpu - m.cpu[name], PeakRSSMiB: float64(hwm) / 1024}
	}
	if len(m.errs) > 0 {
		return out, m.errs[0]
	}
	return out, nil
}

// cpuSeconds is the user and system time of pid.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the CPU time of pid %d: %w", pid, err)
	}
	// The command name may hold spaces: fields count from after its ')'.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("pid %d: short /proc/PID/stat: %q", pid, s)
	}
	// utime and stime are fields 14 and 15 of stat, 12 and 13 after ')'.
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("pid %d: parsing utime %q and stime %q", pid, fields[11], fields[12])
	}
	return (utime + stime) / clockTicks, nil
}

// statusKB reads a kB field of /proc/PID/status.
func statusKB(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the memory of pid %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("pid %d: no %s in /proc/PID/status", pid, field)
}

// machineCPU is the whole machine's CPU time from /proc/stat, in seconds:
// user (programs), kernel (system calls, interrupts and softirqs such as
// loopback networking, much of it not charged to any process), what the
// hypervisor gave to other guests while this one wanted to run (steal),
// and idle time (with iowait).
type machineCPU struct {
	user, kernel, steal, idle float64
}

func readMachineCPU() (machineCPU, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineCPU{}, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	fields := strings.Fields(line)
	// cpu user nice system idle iowait irq softirq steal ...
	if len(fields) < 9 || fields[0] != "cpu" {
		return machineCPU{}, fmt.Errorf("unexpected first line of /proc/stat: %q", line)
	}
	var t [8]float64
	for i := range t {
		if t[i], err = strconv.ParseFloat(fields[i+1], 64); err != nil {
			return machineCPU{}, fmt.Errorf("parsing /proc/stat %q: %w", line, err)
		}
	}
	return machineCPU{
		user:   (t[0] + t[1]) / clockTicks,
		kernel: (t[2] + t[5] + t[6]) / clockTicks,
		idle:   (t[3] + t[4]) / clockTicks,
		steal:  t[7] / clockTicks,
	}, nil
}

// machineMeter measures the whole machine between its start and String.
type machineMeter struct {
	start machineCPU
	err   error
}

func startMachineMeter() *machineMeter {
	start, err := readMachineCPU()
	return &machineMeter{start: start, err: err}
}

// String tells what the machine did since the meter started.
func (m *machineMeter) String() string {
	end, err := readMachineCPU()
	if err = cmp.Or(m.err, err); err != nil {
		return fmt.Sprintf("the machine's CPU time: %v", err)
	}
	return fmt.Sprintf("the machine ran programs %.1f CPU s and the kernel %.1f, idle %.1f, stolen by the hypervisor %.1f",
		end.user-m.start.user, end.kernel-m.start.kernel, end.idle-m.start.idle, end.steal-m.start.steal)
}

// groupMeter measures the CPU time of groups of processes.
type groupMeter struct {
	groups map[string][]int
	start  map[string]float64
}

func startGroupMeter(groups map[string][]int) *groupMeter {
	m := &groupMeter{groups: groups}
	m.start = m.read()
	return m
}

// read sums each group's CPU seconds; a process gone counts nothing.
func (m *groupMeter) read() map[string]float64 {
	out := map[string]float64{}
	for name, pids := range m.groups {
		for _, pid := range pids {
			if cpu, err := cpuSeconds(pid); err == nil {
				out[name] += cpu
			}
		}
	}
	return out
}

// String tells each group's CPU seconds since the start, by name.
func (m *groupMeter) String() string {
	now := m.read()
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(m.groups)) {
		parts = append(parts, fmt.Sprintf("%s %.1f", name, now[name]-m.start[name]))
	}
	return strings.Join(parts, ", ") + " CPU s"
}
