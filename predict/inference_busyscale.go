package predict

import (
	"fmt"

	"github.com/kreplay/kreplay/replay"
)

// ScalePacedEnergy scales the kernels' share of inf's in-place energy
// (PacedEnergy) to the predicted busy time. The paced pass replays the
// inference's kernels in order, and they keep the GPU busy longer than
// the real inference's do: the same launches as one CUDA graph, under
// CUPTI, run 5% to 14% past the trace's busy time on the prefills
// recorded in results/h200/inference-hook/, and the paced pass's energy
// above the waiting power exceeds the real run's by the same ratio
// within 1% on four of five. So
//
//	EnergyJ = (PacedJ - WaitPowerW x PacedWallNS) x BusyScale + WaitPowerW x WallNS
//
// with BusyScale = BusyNS / gaps.BusyNS, the timeline's busy time under
// CUPTI; the unscaled energy stays in UnscaledJ. Where the energy is not
// in place it does nothing; where gaps is nil or holds no busy time, or
// the kernels' share is not positive, it leaves the energy unscaled,
// NotScaled saying why. It reports whether it scaled.
func ScalePacedEnergy(inf *Inference, gaps *replay.TimelineGaps) bool {
	if inf == nil || inf.EnergyDesign != EnergyInPlace {
		return false
	}
	inf.clearScale()
	waitJ := inf.Constants.WaitPowerW * inf.PacedWallNS / 1e9
	kernelsJ := inf.PacedJ - waitJ
	switch {
	case gaps == nil || !(gaps.BusyNS > 0):
		inf.NotScaled = "no busy time of the timeline under CUPTI"
	case !(inf.BusyNS > 0):
		inf.NotScaled = "no predicted busy time"
	case !(kernelsJ > 0):
		inf.NotScaled = fmt.Sprintf("the paced pass's %.4g J are not above its waiting power's %.4g J", inf.PacedJ, waitJ)
	}
	if inf.NotScaled != "" {
		return false
	}
	inf.BusyScale = inf.BusyNS / gaps.BusyNS
	inf.UnscaledJ = inf.EnergyJ
	inf.EnergyJ = kernelsJ*inf.BusyScale + inf.Constants.WaitPowerW*inf.WallNS/1e9
	if inf.Tokens > 0 {
		inf.JPerToken = inf.EnergyJ / inf.Tokens
	}
	return true
}

// notScaledText is what EnergyText adds to an unscaled in-place energy:
// why it was not scaled, "" where nothing says.
func (inf *Inference) notScaledText() string {
	if inf.NotScaled == "" {
		return ""
	}
	return "; not scaled to the predicted busy time: " + inf.NotScaled
}

// clearScale forgets a busy scale (ScalePacedEnergy) when the energy is
// set anew.
func (inf *Inference) clearScale() {
	inf.BusyScale, inf.UnscaledJ, inf.NotScaled = 0, 0, ""
}
