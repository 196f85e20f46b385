package schedule

import (
	"fmt"
	"math"
)

// EnergyResult is the energy of an inference in steady state
// (docs/whole-inference.md, section 4).
type EnergyResult struct {
	// KernelJ is the ops' energies summed, per inference.
	KernelJ float64
	// WaitJ is WaitPowerW x (wall - busy): the GPU waiting between ops.
	WaitJ float64
	// TotalJ is KernelJ + WaitJ.
	TotalJ float64
	// WallNS is the simulated (mean) wall, raised to TotalJ over the power
	// limit where the energy over the wall exceeds it (PowerCapped).
	// MedianWallNS is the simulated median wall (Result.WallQ), raised by
	// the same factor there.
	WallNS       float64
	MedianWallNS float64
	PowerCapped  bool
	// PerTokenJ is TotalJ over the tokens; 0 without tokens.
	PerTokenJ float64
}

// Energy adds the energy model to a simulation's result: opEnergyJ[i][j]
// is the predicted energy of the j-th GPU op of inference i (the sum over
// a G's kernels), as Simulate's ops. powerLimitW is the GPU's power limit;
// 0 means none.
func Energy(r Result, opEnergyJ [][]float64, c Constants, powerLimitW float64) (EnergyResult, error) {
	if len(opEnergyJ) != r.Inferences || len(r.Times) != r.Inferences || r.Steady < 1 {
		return EnergyResult{}, fmt.Errorf("energy: energies for %d inferences, the result has %d", len(opEnergyJ), r.Inferences)
	}
	if c.WaitPowerW < 0 || math.IsNaN(c.WaitPowerW) || powerLimitW < 0 || math.IsNaN(powerLimitW) {
		return EnergyResult{}, fmt.Errorf("energy: wait power %g W, power limit %g W", c.WaitPowerW, powerLimitW)
	}
	var kernel float64
	for i, e := range opEnergyJ {
		if len(e) != r.Times[i].Ops {
			return EnergyResult{}, fmt.Errorf("energy: inference %d has %d GPU ops, %d energies given", i, r.Times[i].Ops, len(e))
		}
		for j, v := range e {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return EnergyResult{}, fmt.Errorf("energy: inference %d op %d: %g J", i, j, v)
			}
			if r.Times[i].Steady {
				kernel += v
			}
		}
	}
	out := EnergyResult{KernelJ: kernel / float64(r.Steady), WallNS: r.WallNS, MedianWallNS: r.WallQ.Median}
	out.WaitJ = c.WaitPowerW * max(r.WallNS-r.BusyNS, 0) / 1e9
	out.TotalJ = out.KernelJ + out.WaitJ
	if powerLimitW > 0 && out.TotalJ/(r.WallNS/1e9) > powerLimitW {
		out.WallNS = out.TotalJ / powerLimitW * 1e9
		out.MedianWallNS *= out.WallNS / r.WallNS
		out.PowerCapped = true
	}
	if r.Tokens > 0 {
		out.PerTokenJ = out.TotalJ / r.Tokens
	}
	return out, nil
}
