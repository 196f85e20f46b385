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
	return g, nil
}

// againstMeasured compares the group's wall (the slowest rank's measured
// wall) and energy (summed over the ranks) with measured's runs of the
// sets' workload; "" where measured lacks a rank.
func (g *GroupInference) againstMeasured(sets []*signatures.Set, measured *workload.Measured) string {
	if measured == nil {
		return ""
	}
	var wallS, joules float64
	for r, set := range sets {
		m, err := measured.Lookup(set.Source.Workload, r, len(sets))
		if err != nil {
			return ""
		}
		wallS, joules = max(wallS, m.WallS), joules+m.EnergyJ
	}
	if wallS <= 0 {
		return ""
	}
	s := fmt.Sprintf("wall %.4g ms against the measured %.4g ms (%+.1f%%)", g.WallNS/1e6, wallS*1e3, 100*(g.WallNS/(wallS*1e9)-1))
	if joules > 0 {
		s += fmt.Sprintf(", energy %.4g J against %.4g J (%+.1f%%)", g.EnergyJ, joules, 100*(g.EnergyJ/joules-1))
	}
	return s
}
