package whatif

import (
	"fmt"
	"math"

	"github.com/kreplay/kreplay/replay"
)

// The power cap's clocks, calibrated on the baseline run at the cap.
//
// The first-order view (limit.go) takes each replay's energy at the clock
// it ran at alone, the maximum. Under the cap the whole run runs at a
// lower clock and a lower voltage, and each operation costs less energy
// there. A what-if that removes memory-bound work lets the rest run at a
// lower clock again, so the first-order view under-predicts both the
// energy and the time saving (see results/h100/roofline-whatif/README.md).
//
// The model: let s be the run's SM clock over the replays' clock. Each
// launch's time grows as t(s) = 1 + c (1/s - 1), c the share of the time
// that scales with the clock, and its energy falls as e(s) = 1 - k (1 -
// s), the linear term of the voltage's fall with the clock (energy per
// operation goes as the square of the voltage). One run of the baseline's
// timeline at the cap, its sustained time T1 (the mean per launch), its
// energy E1 and its mean clock s1, against the replays' sums T0 and E0,
// gives c and k:
//
//	c = (T1/T0 - 1) / (1/s1 - 1),   k = (1 - E1/E0) / (1 - s1)
//
// The what-if's run, with sums T0' and E0' from the replays, then runs at
// the clock s2 at which it draws the power the baseline drew, E1/T1 (the
// cap holds the power, not the clock):
//
//	E0' e(s2) / (T0' t(s2)) = E1 / T1
//
// and the saving is T1 - T0' t(s2). This assumes the what-if's run moves
// along the baseline's curve: the same share of clock-bound time and the
// same voltage curve. The launches' gaps inside T1 are counted as scaling
// with the clock, as c absorbs them. The calibration is a measurement of
// the baseline only: the substituted run is never used.
//
// A saving is the difference of two nearly equal times, so a small error
// in either moves it by much more; results/h100/roofline-whatif/README.md
// holds this model's errors against measured savings. again.go predicts
// from two runs of the baseline at the cap instead, with -again: it
// separates the context from the clock, which this one-run curve mixes.
//
// Placing the what-if's run at the limit less the baseline's deficit,
// scaled by the two mixes' demand below the limit, was tried and withdrawn:
// the substituted timelines drew the plain ones' power, not the more it
// predicted (same record).

// CapPrediction is the what-if's prediction at the power cap, calibrated
// on a run of the baseline at the cap (the plain timeline).
type CapPrediction struct {
	// From says what calibrated it.
	From string `json:"from"`
	// BaseNS and BaseJ are the calibrating run's time and energy per
	// launch, BaseMHz its mean SM clock; ReplayMHz the clock the
	// baseline's replays ran at (their time-weighted mean).
	BaseNS    float64 `json:"base_ns"`
	BaseJ     float64 `json:"base_j"`
	BaseMHz   float64 `json:"base_mhz"`
	ReplayMHz float64 `json:"replay_mhz"`
	// ClockShare (c) and EnergySlope (k) are the fitted curve's.
	ClockShare  float64 `json:"clock_share"`
	EnergySlope float64 `json:"energy_slope"`
	// NewMHz, NewNS and NewJ are the what-if's run at the cap; SavingNS
	// and SavingJ its savings against the calibrating run.
	NewMHz   float64 `json:"new_mhz"`
	NewNS    float64 `json:"new_ns"`
	NewJ     float64 `json:"new_j"`
	SavingNS float64 `json:"saving_ns"`
	SavingJ  float64 `json:"saving_j"`
	// Warning says the baseline's replays may not be this GPU's: the
	// curve takes their energies as the calibrating run's GPU's.
	Warning string `json:"warning,omitempty"`
}

// gpuWarning says when the baseline (its GPU's UUID, "" when unknown) and
// the calibrating run (on GPU here) may be two chips: "" when one.
func gpuWarning(baseline, here string) string {
	const why = "; the curve takes its replays' energies as this GPU's, and chips differ " +
		"(two H100s: the same replays 4% apart in energy, which moved the predicted saving by 10%): predict the baseline on this GPU"
	switch {
	case here == "" || baseline == here:
		return ""
	case baseline == "":
		return "the baseline does not say which GPU measured it (no " + replay.KeyGPUUUID + " line)" + why
	}
	return "the baseline was measured on " + baseline + ", this is " + here + why
}

// CapRun is a run of the baseline at the cap: its time and energy per
// launch and its mean SM clock.
type CapRun struct {
	NS, J, MHz float64
	From       string
}

// PredictAtCap calibrates the clock curve on run and predicts the
// what-if's run at the cap from p's replay sums (BaseNS, BaseJ, NewNS,
// NewJ) and the replays' clock (MHz). It errs, naming the input, where
// the curve cannot be fitted: no energies, a run not slower or not at a
// lower clock than the replays.
func PredictAtCap(p *Prediction, replayMHz float64, run CapRun) (*CapPrediction, error) {
	switch {
	case !p.Energy || p.BaseNS <= 0 || p.BaseJ <= 0 || p.NewNS <= 0 || p.NewJ <= 0:
		return nil, fmt.Errorf("no predicted totals of time and energy (give -bench with energies)")
	case replayMHz <= 0:
		return nil, fmt.Errorf("the replays' SM clock is not known (no sm-MHz in the baseline)")
	case run.NS <= 0 || run.J <= 0 || run.MHz <= 0:
		return nil, fmt.Errorf("%s: no time, energy or SM clock", run.From)
	}
	cp := &CapPrediction{From: run.From, BaseNS: run.NS, BaseJ: run.J, BaseMHz: run.MHz, ReplayMHz: replayMHz}
	s1, t1, e1 := run.MHz/replayMHz, run.NS/p.BaseNS, run.J/p.BaseJ
	if s1 >= 1 || t1 <= 1 {
		return nil, fmt.Errorf("%s: %.0f MHz and %.4g ms against the replays' %.0f MHz and %.4g ms: not slowed by a cap, no curve to fit",
			run.From, run.MHz, run.NS/1e6, replayMHz, p.BaseNS/1e6)
	}
	cp.ClockShare = (t1 - 1) / (1/s1 - 1)
	cp.EnergySlope = (1 - e1) / (1 - s1)
	t := func(s float64) float64 { return 1 + cp.ClockShare*(1/s-1) }
	e := func(s float64) float64 { return math.Max(0, 1-cp.EnergySlope*(1-s)) }
	power := run.J / run.NS
	draw := func(s float64) float64 { return p.NewJ * e(s) / (p.NewNS * t(s)) }
	s2 := 1.0
	if draw(1) > power {
		s2 = bisect(func(s float64) bool { return draw(s) > power }, 0.05, 1)
	}
	cp.NewMHz = s2 * replayMHz
	cp.NewNS, cp.NewJ = p.NewNS*t(s2), p.NewJ*e(s2)
	cp.SavingNS, cp.SavingJ = run.NS-cp.NewNS, run.J-cp.NewJ
	return cp, nil
}

// bisect finds, to 1e-9, the point in [lo, hi] where over turns from
// false (at lo) to true (at hi).
func bisect(over func(float64) bool, lo, hi float64) float64 {
	for hi-lo > 1e-9 {
		m := (lo + hi) / 2
		if over(m) {
			hi = m
		} else {
			lo = m
		}
	}
	return (lo + hi) / 2
}
