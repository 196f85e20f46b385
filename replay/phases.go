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
}

// setPrepare sets the preparing time, total and (from t) by part.
func (p *Phases) setPrepare(total time.Duration, t *captured.Timing) {
	p.PrepareNS = total.Nanoseconds()
	p.PrepareFilesNS, p.PrepareModulesNS = t.Files.Nanoseconds(), t.Modules.Nanoseconds()
	p.PrepareMemoryNS, p.PrepareLaunchesNS = t.Memory.Nanoseconds(), t.Launches.Nanoseconds()
	p.PrepareKernels = t.Kernels
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
	return fmt.Sprintf("time over the signatures replayed here (%d): %s each; preparing %s%s, measuring %s (%s of it energy), releasing %s",
		n, roundNS(per), roundNS(sum.PrepareNS), prepareParts(sum), roundNS(sum.MeasureNS), roundNS(energy), roundNS(sum.CloseNS))
}

// prepareParts is " (files ..., modules ..., memory ..., first launches
// ..., other ...; captured kernels built N)" for the parts of sum's preparing
// time, "" when no captured kernel was made.
func prepareParts(sum Phases) string {
	if sum.PrepareKernels == 0 {
		return ""
	}
	parts := []struct {
		name string
		ns   int64
	}{{"files", sum.PrepareFilesNS}, {"modules", sum.PrepareModulesNS}, {"memory", sum.PrepareMemoryNS}, {"first launches", sum.PrepareLaunchesNS}}
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
