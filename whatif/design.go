package whatif

import (
	"errors"
	"fmt"

	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/workload"
)

// The timeline design: issue 46's second design of the what-if's saving,
// fixed before the runs that judge it (on model families it was not
// chosen on), a view beside the others, whose numbers it leaves alone.
//
// Time: the timeline check's measured saving, the plain timeline less
// the substituted one (TimelineCheck.SavingNS, the median of the rounds'
// differences). One launch of a timeline replays the whole trace, the
// one inference it recorded, so the saving per launch is the saving per
// inference, as the other views' sums over the trace's runs are: the
// scale is 1.
//
// Energy: when the baseline model's measured run (the bundle's
// measured.json) draws the power limit, its mean power (energy over wall
// time per inference) at or above PowerLimitedShare of the GPU's limit,
// energy follows time there: the saving is that mean power times the
// time saving. Otherwise it is the timeline check's measured energy
// saving (TimelineCheck.SavingJ). Where the rule cannot be applied (no
// timeline check; no measured run, energy or limit to tell which branch
// holds; under the limit, a timeline check without energies) the design
// says why instead of giving a figure.

// PowerLimitedShare is the share of the GPU's power limit at or above
// which a measured run's mean power counts as at the limit.
const PowerLimitedShare = 0.95

// The timeline design's energy rules (TimelineDesign.EnergyRule).
const (
	RulePowerLimited   = "power-limited: mean power W x time saving"
	RuleTimelineEnergy = "timeline energy"
)

// ModelRun is the baseline model's measured run per inference: the wall
// time and the GPU's energy (0 when not measured), as kreplay capture
// records them in a bundle's measured.json; From says where it was read.
type ModelRun struct {
	WallS   float64 `json:"wall_s_per_iter"`
	EnergyJ float64 `json:"energy_j_per_iter,omitempty"`
	From    string  `json:"from"`
}

// ModelRunFromBundle is the measured run of set's workload (and rank) in
// bundle b's measured.json; an error when the bundle has none or it has
// no such run.
func ModelRunFromBundle(b *workload.Bundle, set *signatures.Set) (*ModelRun, error) {
	m, err := b.Measured()
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("the bundle has no measured run (bundle.json names no measured file)")
	}
	r, err := m.Lookup(set.Source.Workload, set.Source.Rank, set.Source.WorldSize)
	if err != nil {
		return nil, err
	}
	return &ModelRun{WallS: r.WallS, EnergyJ: r.EnergyJ, From: fmt.Sprintf("%s (%s.runs.%s)", m.File, r.Machine, r.Workload)}, nil
}

// TimelineDesign is the timeline design's saving per inference.
type TimelineDesign struct {
	// SavingNS is the timeline check's measured time saving.
	SavingNS float64 `json:"saving_ns"`
	// Energy says whether SavingJ is given, by EnergyRule; NoEnergy says
	// why not otherwise.
	Energy     bool    `json:"energy"`
	NoEnergy   string  `json:"no_energy,omitempty"`
	SavingJ    float64 `json:"saving_j,omitempty"`
	EnergyRule string  `json:"energy_rule,omitempty"`
	// PowerLimited says the measured run draws the limit: MeanPowerW, its
	// energy over its wall time, at or above PowerLimitedShare of
	// PowerLimitW (from PowerLimitFrom). MeasuredFrom names the run.
	PowerLimited   bool    `json:"power_limited"`
	MeanPowerW     float64 `json:"mean_power_w,omitempty"`
	PowerLimitW    float64 `json:"power_limit_w,omitempty"`
	PowerLimitFrom string  `json:"power_limit_from,omitempty"`
	MeasuredFrom   string  `json:"measured_from,omitempty"`
	// TimelineSavingJ is the timeline check's energy saving, whichever
	// rule applies (0 without its energies).
	TimelineSavingJ float64 `json:"timeline_saving_j,omitempty"`
}

// DesignInput is what the timeline design reads: the timeline check (or
// why there is none), the baseline model's measured run (or why there is
// none) and the GPU's power limit in watts (0: unknown) and its source.
type DesignInput struct {
	Check          *TimelineCheck
	NoCheck        string
	Run            *ModelRun
	NoRun          string
	PowerLimitW    float64
	PowerLimitFrom string
}

// PredictTimelineDesign applies the timeline design to in; an error when
// it gives no figure at all (no timeline check). A design whose energy
// rule cannot be applied has Energy false and NoEnergy says why.
func PredictTimelineDesign(in DesignInput) (*TimelineDesign, error) {
	tc := in.Check
	if tc == nil {
		why := in.NoCheck
		if why == "" {
			why = "none given"
		}
		return nil, fmt.Errorf("the timeline check did not run: %s", why)
	}
	if len(tc.Rounds) == 0 {
		return nil, errors.New("the timeline check has no rounds")
	}
	d := &TimelineDesign{SavingNS: tc.SavingNS, PowerLimitW: in.PowerLimitW, PowerLimitFrom: in.PowerLimitFrom}
	timelineJ := tc.PlainJ > 0 && tc.SubstJ > 0
	if timelineJ {
		d.TimelineSavingJ = tc.SavingJ
	}
	if in.Run != nil {
		d.MeasuredFrom = in.Run.From
	}
	if why := d.powerLimited(in); why != "" {
		d.NoEnergy = "cannot tell whether the measured run is at the power limit: " + why
		return d, nil
	}
	switch {
	case d.PowerLimited:
		d.Energy, d.EnergyRule, d.SavingJ = true, RulePowerLimited, d.MeanPowerW*d.SavingNS/1e9
	case timelineJ:
		d.Energy, d.EnergyRule, d.SavingJ = true, RuleTimelineEnergy, tc.SavingJ
	default:
		why := tc.EnergyErr
		if why == "" {
			why = "not measured (kreplay whatif -energy measures it)"
		}
		d.NoEnergy = fmt.Sprintf("the measured run draws %.0f W, under %.0f%% of the %.0f W limit, and the timeline check has no energy: %s",
			d.MeanPowerW, 100*PowerLimitedShare, d.PowerLimitW, why)
	}
	return d, nil
}

// powerLimited sets MeanPowerW and PowerLimited from the measured run and
// the limit, or says why it cannot.
func (d *TimelineDesign) powerLimited(in DesignInput) string {
	r := in.Run
	switch {
	case r == nil && in.NoRun != "":
		return "no measured run: " + in.NoRun
	case r == nil:
		return "no measured run"
	case !(r.WallS > 0) || !(r.EnergyJ > 0):
		return fmt.Sprintf("the measured run (%s) has %g s, %g J per inference: want both positive", r.From, r.WallS, r.EnergyJ)
	case !(in.PowerLimitW > 0):
		return "the GPU's power limit is unknown (neither kreplay predict's power-limit line nor NVML gave it)"
	}
	d.MeanPowerW = r.EnergyJ / r.WallS
	d.PowerLimited = d.MeanPowerW >= PowerLimitedShare*in.PowerLimitW
	return ""
}
