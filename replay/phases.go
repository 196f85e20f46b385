package replay

import (
	"fmt"
	"strings"
	"time"

	"github.com/kreplay/kreplay/captured"
)

// Phases is the host time one signature's replay took: preparing it
// (buffers, binaries, producers), measuring it (Result.EnergyHostNS of
// it in the energy measurement) and releasing it.
type Phases struct {
	PrepareNS int64 `json:"prepare_ns"`
	MeasureNS int64 `json:"measure_ns"`
	CloseNS   int64 `json:"close_ns"`
	// The parts of PrepareNS spent making a captured binary launchable,
	// its producers' included (captured.Timing): reading and decoding the
	// bundle's files, loading modules, allocating and writing buffers,
	// the kernels' first launches. The rest of PrepareNS is other work.
	// PrepareKernels is how many captured kernels were made, producers
	// and rebuilds included.
	PrepareFilesNS    int64 `json:"prepare_files_ns,omitempty"`
	PrepareModulesNS  int64 `json:"prepare_modules_ns,omitempty"`
	PrepareMemoryNS   int64 `json:"prepare_memory_ns,omitempty"`
	PrepareLaunchesNS int64 `json:"prepare_launches_ns,omitempty"`
	PrepareKernels    int   `json:"prepare_kernels,omitempty"`
	// The parts of MeasureNS outside the energy measurement
	// (measureTiming), each moment charged to the innermost: the idle
	// pause before the warm-up; the warm-up's launches; the CUDA graphs
	// of the timed batches (capture, instantiation, destruction); the
	// timed samples and their statistics, less the CUPTI and NVML work
	// among them; the CUPTI activity API's MeasureFlushes flushes of the
	// records (the warm-up's, dropped, and the samples'), and its enabling
	// and disabling; the NVML sampler's start and stop; the clock probe.
	// MeasureSamples counts the timed samples, MeasureTimedNS sums their
	// event times (the GPU's part of sampling); MeasurePauses counts the
	// pauses taken (Result.Paused). The rest of MeasureNS, less
	// Result.EnergyHostNS, is other work.
	MeasurePauseNS       int64 `json:"measure_pause_ns,omitempty"`
	MeasurePauses        int   `json:"measure_pauses,omitempty"`
	MeasureWarmupNS      int64 `json:"measure_warmup_ns,omitempty"`
	MeasureGraphsNS      int64 `json:"measure_graphs_ns,omitempty"`
	MeasureSamplingNS    int64 `json:"measure_sampling_ns,omitempty"`
	MeasureTimedNS       int64 `json:"measure_timed_ns,omitempty"`
	MeasureSamples       int   `json:"measure_samples,omitempty"`
	MeasureCUPTINS       int64 `json:"measure_cupti_ns,omitempty"`
	MeasureFlushes       int   `json:"measure_cupti_flushes,omitempty"`
	MeasureCUPTISwitchNS int64 `json:"measure_cupti_switch_ns,omitempty"`
	// MeasureCUPTIWaitNS is the wait for another GPU's CUPTI recording to
	// end, in a Group (its GPUs time their kernels one at a time).
	MeasureCUPTIWaitNS int64 `json:"measure_cupti_wait_ns,omitempty"`
	MeasureNVMLNS      int64 `json:"measure_nvml_ns,omitempty"`
	MeasureProbeNS     int64 `json:"measure_clock_probe_ns,omitempty"`
	// The parts of the energy measurement (Result.EnergyHostNS): the
	// graphs of its batches; of each of its EnergyWindows back-to-back
	// windows, the warm-up asked, the wait from its end to the counter
	// tick that opened the window, the window between its ticks, and what
	// followed its closing tick (the call in progress, stopping the
	// poller); the duty-cycled measurement again of a capped window,
	// EnergyDutyWindows windows with all their parts. The rest is other
	// work.
	EnergyGraphsNS    int64 `json:"energy_graphs_ns,omitempty"`
	EnergyWarmupNS    int64 `json:"energy_warmup_ns,omitempty"`
	EnergyFirstTickNS int64 `json:"energy_first_tick_ns,omitempty"`
	EnergyWindowNS    int64 `json:"energy_window_ns,omitempty"`
	EnergyAfterNS     int64 `json:"energy_after_ns,omitempty"`
	EnergyWindows     int   `json:"energy_windows,omitempty"`
	EnergyDutyNS      int64 `json:"energy_duty_ns,omitempty"`
	EnergyDutyWindows int   `json:"energy_duty_windows,omitempty"`
}

// setPrepare sets the preparing time, total and (from t) by part.
func (p *Phases) setPrepare(total time.Duration, t *captured.Timing) {
	p.PrepareNS = total.Nanoseconds()
	p.PrepareFilesNS, p.PrepareModulesNS = t.Files.Nanoseconds(), t.Modules.Nanoseconds()
	p.PrepareMemoryNS, p.PrepareLaunchesNS = t.Memory.Nanoseconds(), t.Launches.Nanoseconds()
	p.PrepareKernels = t.Kernels
}

// setMeasure sets the measuring time, total and (from m) by part.
func (p *Phases) setMeasure(total time.Duration, m *measureTiming) {
	p.MeasureNS = total.Nanoseconds()
	p.MeasurePauseNS, p.MeasureWarmupNS, p.MeasureGraphsNS = m.pause.Nanoseconds(), m.warmup.Nanoseconds(), m.graphs.Nanoseconds()
	p.MeasurePauses = m.pauses
	p.MeasureSamplingNS, p.MeasureTimedNS, p.MeasureSamples = m.sampling.Nanoseconds(), m.timed.Nanoseconds(), m.samples
	p.MeasureCUPTINS, p.MeasureFlushes, p.MeasureCUPTISwitchNS = m.cupti.Nanoseconds(), m.flushes, m.cuptiSwitch.Nanoseconds()
	p.MeasureNVMLNS, p.MeasureProbeNS, p.MeasureCUPTIWaitNS = m.nvml.Nanoseconds(), m.probe.Nanoseconds(), m.cuptiWait.Nanoseconds()
	e := &m.energy
	p.EnergyGraphsNS, p.EnergyWarmupNS, p.EnergyFirstTickNS = e.graphs.Nanoseconds(), e.warmup.Nanoseconds(), e.firstTick.Nanoseconds()
	p.EnergyWindowNS, p.EnergyAfterNS, p.EnergyWindows = e.window.Nanoseconds(), e.after.Nanoseconds(), e.windows
	p.EnergyDutyNS, p.EnergyDutyWindows = e.duty.Nanoseconds(), e.dutyWindows
}

// add adds q's times into p.
func (p *Phases) add(q *Phases) {
	p.PrepareNS += q.PrepareNS
	p.MeasureNS += q.MeasureNS
	p.CloseNS += q.CloseNS
	p.PrepareFilesNS += q.PrepareFilesNS
	p.PrepareModulesNS += q.PrepareModulesNS
	p.PrepareMemoryNS += q.PrepareMemoryNS
	p.PrepareLaunchesNS += q.PrepareLaunchesNS
	p.PrepareKernels += q.PrepareKernels
	p.MeasurePauseNS += q.MeasurePauseNS
	p.MeasurePauses += q.MeasurePauses
	p.MeasureWarmupNS += q.MeasureWarmupNS
	p.MeasureGraphsNS += q.MeasureGraphsNS
	p.MeasureSamplingNS += q.MeasureSamplingNS
	p.MeasureTimedNS += q.MeasureTimedNS
	p.MeasureSamples += q.MeasureSamples
	p.MeasureCUPTINS += q.MeasureCUPTINS
	p.MeasureFlushes += q.MeasureFlushes
	p.MeasureCUPTISwitchNS += q.MeasureCUPTISwitchNS
	p.MeasureCUPTIWaitNS += q.MeasureCUPTIWaitNS
	p.MeasureNVMLNS += q.MeasureNVMLNS
	p.MeasureProbeNS += q.MeasureProbeNS
	p.EnergyGraphsNS += q.EnergyGraphsNS
	p.EnergyWarmupNS += q.EnergyWarmupNS
	p.EnergyFirstTickNS += q.EnergyFirstTickNS
	p.EnergyWindowNS += q.EnergyWindowNS
	p.EnergyAfterNS += q.EnergyAfterNS
	p.EnergyWindows += q.EnergyWindows
	p.EnergyDutyNS += q.EnergyDutyNS
	p.EnergyDutyWindows += q.EnergyDutyWindows
}

// reportPhases prints phaseLine of out to o.Progress, when there is one.
func (o SuiteOptions) reportPhases(out []Entry) {
	if line := phaseLine(out); line != "" && o.Progress != nil {
		fmt.Fprintln(o.Progress, line)
	}
}

// phaseLine says where the host time of the entries prepared in this run
// (those with Phases, a failed measurement's included) went; "" when
// none was. On several GPUs the times add up over them.
func phaseLine(out []Entry) string {
	var sum Phases
	var energy int64
	n := 0
	for _, e := range out {
		if e.Phases == nil {
			continue
		}
		n++
		sum.add(e.Phases)
		if e.Result != nil {
			energy += e.Result.EnergyHostNS
		}
	}
	if n == 0 {
		return ""
	}
	per := (sum.PrepareNS + sum.MeasureNS + sum.CloseNS) / int64(n)
	return fmt.Sprintf("time over the signatures replayed here (%d): %s each; preparing %s%s, measuring %s (%s), releasing %s",
		n, roundNS(per), roundNS(sum.PrepareNS), prepareParts(sum), roundNS(sum.MeasureNS), measureParts(sum, energy, n), roundNS(sum.CloseNS))
}

// measureParts is what the phases line says in brackets after the
// measuring time, sum's over n signatures, of which energy went to energy
// measurements: timedParts, then "X of it energy" and energyParts.
func measureParts(sum Phases, energy int64, n int) string {
	return timedParts(sum, energy, n) + fmt.Sprintf("%s of it energy", roundNS(energy)) + energyParts(sum, energy)
}

// timedParts is "pause ... (P of N), warm-up ..., graphs ..., sampling
// ... (... timed on the GPU over N samples), CUPTI flushes ... (N), CUPTI
// on and off ..., [waiting for another GPU's CUPTI recording ..., where a
// GPU of a Group waited,] NVML sampler ..., clock probe ..., other ...; " for the
// parts of sum's measuring outside energy measurements, over n
// signatures, "" when it has none. "(P of N)", the pauses taken of n, is
// left out when none was counted (as in results written before they were).
func timedParts(sum Phases, energy int64, n int) string {
	pauses := ""
	if sum.MeasurePauses > 0 {
		pauses = fmt.Sprintf(" (%d of %d)", sum.MeasurePauses, n)
	}
	parts := []part{{"pause", sum.MeasurePauseNS, pauses}, {"warm-up", sum.MeasureWarmupNS, ""}, {"graphs", sum.MeasureGraphsNS, ""},
		{"sampling", sum.MeasureSamplingNS, fmt.Sprintf(" (%s timed on the GPU over %d samples)", roundNS(sum.MeasureTimedNS), sum.MeasureSamples)},
		{"CUPTI flushes", sum.MeasureCUPTINS, fmt.Sprintf(" (%d)", sum.MeasureFlushes)}, {"CUPTI on and off", sum.MeasureCUPTISwitchNS, ""}}
	if sum.MeasureCUPTIWaitNS > 0 {
		parts = append(parts, part{"waiting for another GPU's CUPTI recording", sum.MeasureCUPTIWaitNS, ""})
	}
	parts = append(parts, part{"NVML sampler", sum.MeasureNVMLNS, ""}, part{"clock probe", sum.MeasureProbeNS, ""})
	if !anyPart(parts) {
		return ""
	}
	return listParts(parts, sum.MeasureNS-energy) + "; "
}

// energyParts is ": graphs ..., windows ... (N: warm-up ..., first tick
// ..., between ticks ..., after the last tick ...), duty-cycled again ...
// (N windows), other ..." for the parts of sum's energy measurements (energy
// in all), "" when it has none.
func energyParts(sum Phases, energy int64) string {
	if sum.EnergyWindows == 0 && sum.EnergyDutyWindows == 0 && sum.EnergyGraphsNS == 0 {
		return ""
	}
	windows := []part{{"warm-up", sum.EnergyWarmupNS, ""}, {"first tick", sum.EnergyFirstTickNS, ""},
		{"between ticks", sum.EnergyWindowNS, ""}, {"after the last tick", sum.EnergyAfterNS, ""}}
	var inWindows int64
	for _, p := range windows {
		inWindows += p.ns
	}
	parts := []part{{"graphs", sum.EnergyGraphsNS, ""},
		{"windows", inWindows, fmt.Sprintf(" (%d: %s)", sum.EnergyWindows, listParts(windows, -1))},
		{"duty-cycled again", sum.EnergyDutyNS, fmt.Sprintf(" (%d windows)", sum.EnergyDutyWindows)}}
	return ": " + listParts(parts, energy)
}

// listParts is "name time note, ..." for parts, and ", other ..." for what
// of total they leave (none below 0) unless total is negative.
func listParts(parts []part, total int64) string {
	var b strings.Builder
	rest := total
	for i, p := range parts {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s%s", p.name, roundNS(p.ns), p.note)
		rest -= p.ns
	}
	if total >= 0 {
		fmt.Fprintf(&b, ", other %s", roundNS(max(rest, 0)))
	}
	return b.String()
}

// part is one named part of a phase's time, in ns, and what follows its
// time in the line.
type part struct {
	name string
	ns   int64
	note string
}

// anyPart reports whether any of ps has time.
func anyPart(ps []part) bool {
	for _, p := range ps {
		if p.ns != 0 {
			return true
		}
	}
	return false
}

// prepareParts is " (files ..., modules ..., memory ..., first launches
// ..., other ...; captured kernels built N)" for the parts of sum's preparing
// time, "" when no captured kernel was made.
func prepareParts(sum Phases) string {
	if sum.PrepareKernels == 0 {
		return ""
	}
	parts := []part{{"files", sum.PrepareFilesNS, ""}, {"modules", sum.PrepareModulesNS, ""}, {"memory", sum.PrepareMemoryNS, ""},
		{"first launches", sum.PrepareLaunchesNS, ""}}
	var b strings.Builder
	rest := sum.PrepareNS
	for _, p := range parts {
		fmt.Fprintf(&b, "%s %s, ", p.name, roundNS(p.ns))
		rest -= p.ns
	}
	fmt.Fprintf(&b, "other %s; captured kernels built %d", roundNS(max(rest, 0)), sum.PrepareKernels)
	return " (" + b.String() + ")"
}

// roundNS is ns as a duration to 10 ms.
func roundNS(ns int64) time.Duration { return time.Duration(ns).Round(10 * time.Millisecond) }
