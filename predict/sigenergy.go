package predict

import (
	"fmt"
	"strings"

	"github.com/kreplay/kreplay/schedule"
)

// SignatureEnergy says whether each signature's replay gets its own energy
// window (FlowOptions.SignatureEnergy; kreplay predict -signature-energy).
// Those windows feed the isolated energy design only (the replays'
// energies summed, kept beside the in-place design and its fallback), and
// take most of an energy prediction's time.
type SignatureEnergy string

// The signature-energy modes. The zero value is SignatureEnergyAuto.
const (
	// SignatureEnergyAuto is SignatureEnergyOff where the inference's
	// energy can be in place (Measure.Energy, a recorded host schedule,
	// the timeline run: the paced timeline measures it), else
	// SignatureEnergyOn.
	SignatureEnergyAuto SignatureEnergy = "auto"
	// SignatureEnergyOn measures every signature's energy window (or
	// those FlowOptions.EnergyShare picks), as replay.SuiteOptions does.
	SignatureEnergyOn SignatureEnergy = "on"
	// SignatureEnergyOff measures no signature's energy window; the host
	// probe's waiting power and the timelines' energies are still
	// measured where Measure.Energy says so.
	SignatureEnergyOff SignatureEnergy = "off"
)

// SignatureEnergyModes are the modes ParseSignatureEnergy takes, in the
// order a usage line names them.
var SignatureEnergyModes = []SignatureEnergy{SignatureEnergyAuto, SignatureEnergyOn, SignatureEnergyOff}

// ParseSignatureEnergy reads a signature-energy mode: auto, on or off.
func ParseSignatureEnergy(s string) (SignatureEnergy, error) {
	for _, m := range SignatureEnergyModes {
		if s == string(m) {
			return m, nil
		}
	}
	names := make([]string, len(SignatureEnergyModes))
	for i, m := range SignatureEnergyModes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("signature energy %q: want %s", s, strings.Join(names, ", "))
}

// NoSignatureWindows is why an inference whose signatures had no energy
// window of their own (SignatureEnergyOff) has no isolated design
// (Inference.NoIsolated).
const NoSignatureWindows = "no signature's own energy window (-signature-energy on)"

// signatureWindows says whether the signature replays measure their own
// energy windows under o, and a progress line saying what was chosen and
// why ("" where Measure.Energy is off: no energy is measured anywhere).
// An unknown mode is taken as SignatureEnergyOn.
func (o FlowOptions) signatureWindows() (bool, string) {
	if !o.Measure.Energy {
		return false, ""
	}
	const skipped, measured = "each signature's own window skipped", "each signature's own window measured"
	switch o.SignatureEnergy {
	case SignatureEnergyOff:
		return false, skipped + " (-signature-energy off): the inference's energy only in place (the paced timeline), no isolated sum"
	case SignatureEnergyAuto, "":
	default:
		return true, measured + " (-signature-energy " + string(o.SignatureEnergy) + ")"
	}
	if why := o.notInPlaceAhead(); why != "" {
		return true, measured + ": the inference's energy cannot be in place (" + why + "); -signature-energy off skips them"
	}
	return false, skipped + ": the inference's energy is measured in place (the paced timeline); -signature-energy on measures them"
}

// notInPlaceAhead says why, before anything runs, o's inference's energy
// cannot be put in place by a paced timeline; "" where it can.
func (o FlowOptions) notInPlaceAhead() string {
	switch {
	case o.Schedule == nil:
		return "the whole inference is not predicted (-inference=false, or no host schedule)"
	case o.Schedule.Source != schedule.SourceRecorder:
		return "no recorded host schedule to pace a timeline with"
	case o.NoTimeline:
		return "-no-timeline"
	}
	return ""
}
