package predict

import (
	"fmt"
	"strings"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/replay"
)

// The energy designs of a predicted inference (Inference.EnergyDesign;
// docs/whole-inference.md, section 4).
const (
	// EnergyInPlace is the kernels' energy in place: the paced timeline's
	// energy per pass (the replays launched at the recorded host pacing,
	// the host's gaps spent for real) plus the host probe's waiting power
	// over the predicted wall less the paced window's wall per pass.
	EnergyInPlace = "paced"
	// EnergyIsolated is the isolated replays' energies summed plus the
	// waiting power over the wall less the GPU's busy time (KernelJ +
	// WaitJ), the design where no paced energy exists.
	EnergyIsolated = "isolated"
	// EnergyNone is no energy at all: no replay measured one, or the
	// signatures had no windows of their own and no paced energy exists
	// either (Inference.NoEnergy says so), and the inference's energy
	// figures are 0.
	EnergyNone = "none"
)

// PacedEnergy sets inf's energy from the paced timeline r where r holds a
// measured energy (JoulesPerOp, Seconds and Ops all positive):
//
//	EnergyJ = r.Energy.JoulesPerOp + WaitPowerW x (WallNS - windowWallNS)/1e9
//
// with windowWallNS = r.Energy.Seconds/r.Energy.Ops x 1e9, the energy
// window's wall per pass; JPerToken = EnergyJ/Tokens where Tokens > 0.
// The design becomes EnergyInPlace and PacedJ, PacedWallNS record its
// inputs; IsolatedJ keeps the isolated design's total (0 where it was not
// measured: NoIsolated). Where the power
// limit raised the wall (PowerCapped), the raised wall is the one taken:
// the paced window ran under the limit, so its energy is physical, and the
// difference term charges waiting power for the wall beyond it (or takes
// it back for a wall shorter than the pass).
//
// Otherwise (r nil, no energy, a window without passes or length, or an
// in-place energy not positive) inf keeps the isolated design,
// EnergyDesign is EnergyIsolated, and NotInPlace says why; false. An
// inference without the isolated design (NoIsolated) then has no energy,
// NoEnergy naming both reasons (isolatedEnergy); one with a paced energy
// takes it, NoEnergy cleared. A nil inf, and one without an energy for
// another reason (NoEnergy, NoIsolated ""), are left alone: false.
func PacedEnergy(inf *Inference, r *replay.PacedResult) bool {
	if inf == nil || (inf.NoEnergy != "" && inf.NoIsolated == "") {
		return false
	}
	if inf.NoIsolated == "" {
		inf.IsolatedJ = inf.KernelJ + inf.WaitJ
	}
	why := notInPlace(r)
	var j, windowNS float64
	if why == "" {
		windowNS = r.Energy.Seconds / r.Energy.Ops * 1e9
		j = r.Energy.JoulesPerOp + inf.Constants.WaitPowerW*(inf.WallNS-windowNS)/1e9
		if !(j > 0) {
			why = fmt.Sprintf("the in-place energy %.4g J is not positive (the paced pass's %.4g ms against the wall %.4g ms)", j, windowNS/1e6, inf.WallNS/1e6)
		}
	}
	if why != "" {
		inf.isolatedEnergy(why)
		return false
	}
	inf.EnergyDesign, inf.NotInPlace, inf.NoEnergy = EnergyInPlace, "", ""
	inf.PacedJ, inf.PacedWallNS = r.Energy.JoulesPerOp, windowNS
	inf.clearScale()
	inf.EnergyJ = j
	inf.JPerToken = 0
	if inf.Tokens > 0 {
		inf.JPerToken = j / inf.Tokens
	}
	return true
}

// notInPlace says why r holds no paced energy to put the kernels' energy
// in place with; "" where it holds one.
func notInPlace(r *replay.PacedResult) string {
	switch {
	case r == nil:
		return "no paced timeline"
	case r.Energy == nil && r.EnergyErr != "":
		return "the paced timeline's energy: " + r.EnergyErr
	case r.Energy == nil:
		return "the paced timeline measured no energy window"
	case !(r.Energy.JoulesPerOp > 0):
		return fmt.Sprintf("the paced timeline's energy per pass is %g J", r.Energy.JoulesPerOp)
	case !(r.Energy.Ops > 0) || !(r.Energy.Seconds > 0):
		return fmt.Sprintf("the paced energy window has %g passes over %g s", r.Energy.Ops, r.Energy.Seconds)
	}
	return ""
}

// isolatedEnergy gives inf the isolated design, KernelJ + WaitJ (and its
// J/token), why naming the reason no paced energy was taken; an
// inference without an energy (NoEnergy) keeps none, and one without the
// isolated design (NoIsolated) has none, NoEnergy naming why and
// NoIsolated.
func (inf *Inference) isolatedEnergy(why string) {
	if inf.NoIsolated != "" {
		inf.noEnergy(why + "; " + inf.NoIsolated)
		return
	}
	if inf.NoEnergy != "" {
		return
	}
	inf.IsolatedJ = inf.KernelJ + inf.WaitJ
	inf.EnergyDesign, inf.NotInPlace = EnergyIsolated, why
	inf.PacedJ, inf.PacedWallNS = 0, 0
	inf.clearScale()
	inf.EnergyJ = inf.IsolatedJ
	inf.JPerToken = 0
	if inf.Tokens > 0 {
		inf.JPerToken = inf.EnergyJ / inf.Tokens
	}
}

// noEnergy leaves inf without an energy, why saying so: every energy
// figure 0, the design EnergyNone (NoIsolated kept).
func (inf *Inference) noEnergy(why string) {
	inf.NoEnergy, inf.EnergyDesign, inf.NotInPlace = why, EnergyNone, ""
	inf.KernelJ, inf.WaitJ, inf.EnergyJ, inf.JPerToken = 0, 0, 0, 0
	inf.IsolatedJ, inf.PacedJ, inf.PacedWallNS = 0, 0, 0
	inf.clearScale()
}

// EnergyText is the inference's energy design in one line: in place, its
// terms and the isolated total beside (or that it was not measured:
// NoIsolated); isolated, the reason; none, "not measured" and why.
func (inf *Inference) EnergyText() string {
	if inf.NoEnergy != "" {
		return "not measured: " + inf.NoEnergy
	}
	if inf.EnergyDesign != EnergyInPlace {
		return fmt.Sprintf("%.4g J from the isolated replays (kernels %.4g J + waiting %.4g J): no paced energy: %s",
			inf.EnergyJ, inf.KernelJ, inf.WaitJ, inf.NotInPlace)
	}
	isolated := fmt.Sprintf("the isolated replays' sum %.4g J (%+.1f%%), not judged", inf.IsolatedJ, 100*(inf.IsolatedJ/inf.EnergyJ-1))
	if inf.NoIsolated != "" {
		isolated = IsolatedNotMeasured
	}
	if inf.BusyScale > 0 {
		return fmt.Sprintf("%.4g J in place: the paced timeline's %.4g J per pass less waiting %.1f W x its %.4g ms, x%.3f to the predicted busy time, + waiting x the wall %.4g ms (unscaled %.4g J); %s",
			inf.EnergyJ, inf.PacedJ, inf.Constants.WaitPowerW, inf.PacedWallNS/1e6, inf.BusyScale, inf.WallNS/1e6, inf.UnscaledJ, isolated)
	}
	return fmt.Sprintf("%.4g J in place: the paced timeline's %.4g J per pass + waiting %.1f W x (wall %.4g ms - the paced pass's %.4g ms)%s; %s",
		inf.EnergyJ, inf.PacedJ, inf.Constants.WaitPowerW, inf.WallNS/1e6, inf.PacedWallNS/1e6, inf.notScaledText(), isolated)
}

// IsolatedNotMeasured is what the in-place energy's line says of the
// isolated replays' sum where it was not measured (Inference.NoIsolated,
// or an output without isolated-J/op).
const IsolatedNotMeasured = "the isolated replays' sum not measured (-signature-energy on measures it)"

// notInPlacePrefix and notInPlaceTag frame the line WriteBench writes for
// an inference of the isolated design, which ReadResults reads back as
// WorkloadResults.EnergyNotInPlace: "kreplay BenchmarkInference/...:
// energy of the isolated replays: REASON"; noEnergyTag the one for an
// inference without an energy (Inference.NoEnergy), read back as
// WorkloadResults.NoEnergy: "kreplay BenchmarkInference/...: no energy:
// REASON".
const (
	notInPlacePrefix = "kreplay Benchmark"
	notInPlaceTag    = ": energy of the isolated replays: "
	noEnergyTag      = ": no energy: "
)

// notInPlaceLine is the line for workload's inference benchmark, whose
// inference kept the isolated design for reason why.
func notInPlaceLine(workload, why string) string { return energyLine(workload, notInPlaceTag, why) }

// parseNotInPlaceLine reads a notInPlaceLine: its workload and reason.
func parseNotInPlaceLine(line string) (workload, why string, ok bool) {
	return parseEnergyLine(line, notInPlaceTag)
}

// noEnergyLine is the line for workload's inference benchmark, whose
// inference has no energy for reason why.
func noEnergyLine(workload, why string) string { return energyLine(workload, noEnergyTag, why) }

// parseNoEnergyLine reads a noEnergyLine: its workload and reason.
func parseNoEnergyLine(line string) (workload, why string, ok bool) {
	return parseEnergyLine(line, noEnergyTag)
}

// energyLine is the line, tagged tag, that says why of workload's
// inference benchmark's energy, on one line.
func energyLine(workload, tag, why string) string {
	return notInPlacePrefix + bench.InferenceName + "/" + InferenceBenchName(workload) + tag + strings.ReplaceAll(why, "\n", " ") + "\n"
}

// parseEnergyLine reads an energyLine tagged tag: its workload and reason.
func parseEnergyLine(line, tag string) (workload, why string, ok bool) {
	rest, ok := strings.CutPrefix(line, notInPlacePrefix+bench.InferenceName+"/workload=")
	if !ok {
		return "", "", false
	}
	name, why, ok := strings.Cut(rest, tag)
	if !ok {
		return "", "", false
	}
	w, ok := strings.CutSuffix(name, "/inference")
	return w, why, ok && w != ""
}
