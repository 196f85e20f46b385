package predict

import (
	"context"
	"fmt"
	"io"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/workload"
)

// PredictGroupFlow predicts a multi-rank workload's whole inference once
// its ranks' signatures were replayed (sets[r] and entries[r], rank r's):
// each rank's host schedule from the bundle b of input (HostScheduleFor:
// the recorded one, or its trace's gaps, a guess), the host probe of the
// GPU that stands for it (devs[r mod len(devs)], replay.MeasureHost), then
// PredictGroup. It prints the prediction to w and, where measured holds
// the workload's run, compares the group's wall and energy with it (read
// only, never fed in).
func PredictGroupFlow(input string, b *workload.Bundle, sets []*signatures.Set, entries [][]replay.Entry, devs []*replay.Device,
	measured *workload.Measured, w io.Writer) (*GroupInference, error) {
	if len(sets) != len(entries) || len(devs) == 0 {
		return nil, fmt.Errorf("group inference: %d sets, %d entry lists, %d devices", len(sets), len(entries), len(devs))
	}
	ins := make([]InferenceInput, len(sets))
	probes := map[int]replay.HostProbe{}
	for r, set := range sets {
		s, rt, err := HostScheduleFor(input, b, set)
		if err != nil {
			return nil, fmt.Errorf("group inference: rank %d: %w", r, err)
		}
		d := devs[r%len(devs)]
		p, ok := probes[d.Index]
		if !ok {
			if p, err = replay.MeasureHost(context.Background(), d, replay.HostProbeOptions{}); err != nil {
				return nil, fmt.Errorf("group inference: host probe on device %d: %w", d.Index, err)
			}
			probes[d.Index] = p
		}
		ins[r] = InferenceInput{Set: set, Runtime: rt, Schedule: s, Entries: entries[r], Constants: HostConstants(&p)}
	}
	g, err := PredictGroup(ins)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "group inference (host schedules from the %s): %s\n", ins[0].Schedule.Source, g.Summary())
	if line := g.againstMeasured(sets, measured); line != "" {
		fmt.Fprintf(w, "group inference: %s\n", line)
	}
	if tg, err := tracedGroup(ins); err != nil {
		fmt.Fprintf(w, "group inference with the trace's kernel times: %v\n", err)
	} else {
		line := tg.wallAgainst(sets, measured)
		if line == "" {
			line = fmt.Sprintf("wall median %.4g ms, mean %.4g ms", tg.MedianWallNS/1e6, tg.WallNS/1e6)
		}
		fmt.Fprintf(w, "group inference with the trace's kernel times in place of the replays (a check, not a prediction): %s\n", line)
	}
	return g, nil
}

// againstMeasured compares the group's wall with the measured run
// (wallAgainst) and its energy, where it has one, with the ranks'
// measured energies summed; "" where measured lacks a rank.
func (g *GroupInference) againstMeasured(sets []*signatures.Set, measured *workload.Measured) string {
	s := g.wallAgainst(sets, measured)
	if s == "" {
		return ""
	}
	if m, _ := measuredGroup(sets, measured); m.joules > 0 && g.NoEnergy == "" {
		s += fmt.Sprintf(", energy %.4g J against %.4g J (%+.1f%%)", g.EnergyJ, m.joules, 100*(g.EnergyJ/m.joules-1))
	}
	return s
}

// wallAgainst compares the group's median wall with the measured median
// inference, as the acceptance takes it, and its mean wall with the
// measured mean wall per inference, which the measured energy belongs
// to; "" where measured lacks a rank.
func (g *GroupInference) wallAgainst(sets []*signatures.Set, measured *workload.Measured) string {
	m, ok := measuredGroup(sets, measured)
	if !ok {
		return ""
	}
	return fmt.Sprintf("wall median %.4g ms against the measured %s %.4g ms (%+.1f%%); mean %.4g ms against the measured mean wall per inference %.4g ms (%+.1f%%)",
		g.MedianWallNS/1e6, m.medianName(), m.medianNS/1e6, 100*(g.MedianWallNS/m.medianNS-1), g.WallNS/1e6, m.meanNS/1e6, 100*(g.WallNS/m.meanNS-1))
}

// groupMeasured is a group's measured run: its median inference (the
// slowest rank's spans' median where the capture recorded every rank's,
// spans true, else the slowest rank's median as runner.Result.MedianMS
// takes it: its mean wall per inference where it has no spans), its mean
// wall per inference (the slowest rank's) and the ranks' energies summed.
type groupMeasured struct {
	medianNS, meanNS, joules float64
	spans                    bool
}

// medianName names what medianNS is: the median inference, or the mean
// wall per inference where no spans were recorded.
func (m groupMeasured) medianName() string {
	if m.spans {
		return "median inference"
	}
	return "wall per inference (no spans recorded: a mean)"
}

// measuredGroup is the measured run of the sets' group; ok false where
// measured lacks a rank or a wall.
func measuredGroup(sets []*signatures.Set, measured *workload.Measured) (groupMeasured, bool) {
	if measured == nil {
		return groupMeasured{}, false
	}
	out := groupMeasured{spans: true}
	for r, set := range sets {
		m, err := measured.Lookup(set.Source.Workload, r, len(sets))
		if err != nil {
			return groupMeasured{}, false
		}
		ms, spans := m.Result().MedianMS()
		out.medianNS, out.meanNS, out.joules = max(out.medianNS, ms*1e6), max(out.meanNS, m.WallS*1e9), out.joules+m.EnergyJ
		out.spans = out.spans && spans
	}
	return out, out.meanNS > 0 && out.medianNS > 0
}
