package replay

import (
	"fmt"
	"time"
)

// Phases is the host time one signature's replay took: preparing it
// (buffers, binaries, producers), measuring it (Result.EnergyHostNS of
// it in the energy measurement) and releasing it.
type Phases struct {
	PrepareNS int64 `json:"prepare_ns"`
	MeasureNS int64 `json:"measure_ns"`
	CloseNS   int64 `json:"close_ns"`
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
		sum.PrepareNS += e.Phases.PrepareNS
		sum.MeasureNS += e.Phases.MeasureNS
		sum.CloseNS += e.Phases.CloseNS
		if e.Result != nil {
			energy += e.Result.EnergyHostNS
		}
	}
	if n == 0 {
		return ""
	}
	d := func(ns int64) time.Duration { return time.Duration(ns).Round(10 * time.Millisecond) }
	per := (sum.PrepareNS + sum.MeasureNS + sum.CloseNS) / int64(n)
	return fmt.Sprintf("time over the signatures replayed here (%d): %s each; preparing %s, measuring %s (%s of it energy), releasing %s",
		n, d(per), d(sum.PrepareNS), d(sum.MeasureNS), d(energy), d(sum.CloseNS))
}
