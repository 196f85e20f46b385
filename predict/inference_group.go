package predict

import (
	"errors"
	"fmt"

	"github.com/kreplay/kreplay/schedule"
)

// GroupInference is a tensor-parallel group's whole inference predicted
// from each rank's host schedule and replays, the ranks bound by their
// collectives (schedule.SimulateGroup): no measured whole-run quantity
// enters it.
type GroupInference struct {
	// Ranks are each rank's figures, in rank order; a rank's PeerWaitNS is
	// its collectives' wait for the others.
	Ranks []*Inference `json:"ranks"`
	// WallNS is the group's mean wall per inference, its slowest rank's
	// mean, and MedianWallNS its slowest rank's median (not the median of
	// each inference's slowest rank: ranks bound by their collectives end
	// an inference nearly together); EnergyJ the ranks' energies summed
	// (every GPU of the group).
	WallNS       float64 `json:"wall_ns"`
	MedianWallNS float64 `json:"median_wall_ns,omitempty"`
	EnergyJ      float64 `json:"energy_j"`
	// NoEnergy says why the group has no energy (EnergyJ 0): a rank's
	// replays measured none (Inference.NoEnergy).
	NoEnergy string `json:"no_energy,omitempty"`
}

// PredictGroup predicts a group's whole inference: ins[r] is rank r's
// input as PredictInference takes one (its schedule, set, replays and its
// GPU's constants). The ranks' schedules are simulated together, each
// rank's k-th collective starting once every rank's stream reached its
// k-th; each rank's energy is its own GPU's (schedule.Energy). Host
// what-ifs are not predicted for a group.
func PredictGroup(ins []InferenceInput) (*GroupInference, error) {
	if len(ins) < 2 {
		return nil, errors.New("group inference: want two ranks or more")
	}
	bs := make([]*boundInput, len(ins))
	ss := make([]*schedule.Schedule, len(ins))
	ops := make([][][]schedule.Op, len(ins))
	cs := make([]schedule.Constants, len(ins))
	for r, in := range ins {
		b, err := bindInput(in)
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
		bs[r], ss[r], ops[r], cs[r] = b, in.Schedule, b.ops, in.Constants
	}
	res, err := schedule.SimulateGroup(ss, ops, cs)
	if err != nil {
		return nil, fmt.Errorf("group inference: %w", err)
	}
	g := &GroupInference{}
	for r, b := range bs {
		inf, err := b.inference(ins[r], res[r])
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
		inf.isolatedEnergy("a rank of a group: no paced timeline of its own")
		g.Ranks = append(g.Ranks, inf)
		g.WallNS = max(g.WallNS, inf.WallNS)
		g.MedianWallNS = max(g.MedianWallNS, inf.MedianWallNS)
		g.EnergyJ += inf.EnergyJ
		if inf.NoEnergy != "" && g.NoEnergy == "" {
			g.NoEnergy = fmt.Sprintf("rank %d: %s", r, inf.NoEnergy)
		}
	}
	if g.NoEnergy != "" {
		g.EnergyJ = 0
	}
	return g, nil
}

// Summary is the group's prediction in one line.
func (g *GroupInference) Summary() string {
	joules := func(j float64) string { return fmt.Sprintf("%.4g J", j) }
	energy := joules(g.EnergyJ) + " over its GPUs"
	if g.NoEnergy != "" {
		joules = func(float64) string { return "energy not measured" }
		energy = "energy not measured (" + g.NoEnergy + ")"
	}
	s := fmt.Sprintf("group of %d ranks: wall median %.4g ms, mean %.4g ms, %s", len(g.Ranks), g.MedianWallNS/1e6, g.WallNS/1e6, energy)
	for r, inf := range g.Ranks {
		s += fmt.Sprintf("; rank %d: busy %.4g ms, waiting for peers %.4g ms, for the host %.4g ms, %s", r,
			inf.BusyNS/1e6, inf.PeerWaitNS/1e6, inf.GPUIdleNS/1e6, joules(inf.EnergyJ))
	}
	return s
}
