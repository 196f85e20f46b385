package whatif

import (
	"fmt"

	"github.com/kreplay/kreplay/replay"
)

// The what-if at the power cap, from the baseline run twice at the cap:
// as it is (the plain timeline, A) and with the replaced runs removed,
// nothing launched in their place (the removed timeline, D:
// replay.Substitution with no kernel). D holds neither the replaced
// signatures nor the kernel: it is everything the what-if keeps, at the
// cap, and the what-if's run is D with the kernel's runs added.
//
// Why D and not the again run alone (again.go): the again model
// extrapolates from A and B, both above the what-if's clock, and the kept
// work's energy is not linear in the clock over that span, so it places
// the what-if's clock too high and over-predicts the saving (see
// results/h100/roofline-whatif/README.md). D measures the kept work at
// about the what-if's clock, so the model interpolates between D and A
// instead of extrapolating.
//
// The model, in again.go's terms. KG(s) = a + b/s through D (KG = T_D)
// and A (KG = T_A - R_A, R_A the replaced signatures' time in context);
// E_KG(s) the line through D (P T_D) and A (P T_A - E_R, E_R their power
// alone, Rotating, times the clock ratio, times R_A). The what-if runs
// where P (KG(s) + F) = E_KG(s) + E_F, F and E_F the kernel's runs alone
// (Rotating), its power scaled by the clock as the replaced ones'.
//
// Guesses, labelled: the kernel's runs take in context their time alone
// in the Rotating mode and draw its power alone times the clock ratio;
// the kept work's energy is linear in the clock between D and A; the cap
// holds the plain timeline's power in every run. The model's errors
// against measured savings, on the embedded workload and a held-out one,
// are in results/h100/roofline-whatif/README.md.

// RemovedPrediction is the what-if's prediction at the cap from the plain
// and removed timelines.
type RemovedPrediction struct {
	// PowerW is the power the cap held (the plain timeline's energy
	// window).
	PowerW float64 `json:"power_w"`
	// PlainNS, PlainMHz, RemovedNS and RemovedMHz are the two runs'
	// sustained times per launch (the rounds' means) and NVML clocks.
	PlainNS    float64 `json:"plain_ns"`
	PlainMHz   float64 `json:"plain_mhz"`
	RemovedNS  float64 `json:"removed_ns"`
	RemovedMHz float64 `json:"removed_mhz"`
	// ReplacedNS and ReplacedJ are the replaced signatures' time in
	// context in the plain run and their energy there (power alone,
	// Rotating, scaled to PlainMHz).
	ReplacedNS float64 `json:"replaced_ns"`
	ReplacedJ  float64 `json:"replaced_j"`
	// AblationNS is the saving with no model at all: the plain run less
	// the removed run less the kernel's runs alone (PlainNS - RemovedNS -
	// FusedNS). What the model adds to it is the clock's rise with the
	// kernel's runs at the cap: SavingNS - AblationNS.
	AblationNS float64 `json:"ablation_saving_ns"`
	// CapFit is the kept work fitted through the two runs (KeptJ at
	// RemovedMHz), the kernel's runs and the what-if's run.
	CapFit
}

// RemovedInput is what PredictRemoved needs: the two runs at the cap, the
// replaced signatures' time in context in the plain one and their energy
// alone, and the kernel's runs.
type RemovedInput struct {
	PowerW                float64
	PlainNS, PlainMHz     float64
	RemovedNS, RemovedMHz float64
	ReplacedNS, ReplacedJ float64
	FusedNS, FusedJ       float64
	// AloneMHz is the clock of the replays alone that priced ReplacedJ
	// and FusedJ (0: unknown, and their energies stand as given).
	AloneMHz float64
}

// PredictRemoved solves the model above. It errs, naming what is missing
// or out of order, where the two runs do not give a curve: no power or
// clocks, a removed run not at a lower clock than the plain one, or kept
// work that does not speed up with the clock.
func PredictRemoved(in RemovedInput) (*RemovedPrediction, error) {
	switch {
	case in.PowerW <= 0 || in.PlainNS <= 0 || in.RemovedNS <= 0 || in.PlainMHz <= 0 || in.RemovedMHz <= 0:
		return nil, fmt.Errorf("the plain and removed runs need times, clocks and the power held (%.0f W)", in.PowerW)
	case in.ReplacedNS <= 0 || in.ReplacedJ <= 0:
		return nil, fmt.Errorf("the replaced signatures' time in context (%.4g ms) or their energy is missing", in.ReplacedNS/1e6)
	case in.FusedNS <= 0 || in.FusedJ <= 0:
		return nil, fmt.Errorf("the kernel's time and energy alone (Rotating) are missing")
	case in.RemovedMHz >= in.PlainMHz:
		return nil, fmt.Errorf("the removed run's clock, %.0f MHz, is not below the plain run's, %.0f: no curve to fit", in.RemovedMHz, in.PlainMHz)
	}
	p := &RemovedPrediction{PowerW: in.PowerW, PlainNS: in.PlainNS, PlainMHz: in.PlainMHz, RemovedNS: in.RemovedNS, RemovedMHz: in.RemovedMHz,
		ReplacedNS: in.ReplacedNS, CapFit: CapFit{FusedNS: in.FusedNS, FusedJ: in.FusedJ, AloneMHz: in.AloneMHz}}
	if err := p.fitTime(in.RemovedNS, in.RemovedMHz, in.PlainNS-in.ReplacedNS, in.PlainMHz); err != nil {
		return nil, err
	}
	w := in.PowerW / 1e9 // J per ns
	p.ReplacedJ = in.ReplacedJ * clockScale(in.PlainMHz, in.AloneMHz)
	eD, eA := w*in.RemovedNS, w*in.PlainNS-p.ReplacedJ
	p.KeptJ, p.EnergySlope = eD, (eA-eD)/(in.PlainMHz-in.RemovedMHz)
	if err := p.solve(in.PowerW, in.PlainNS, in.RemovedMHz, in.RemovedMHz/4, 2*in.PlainMHz); err != nil {
		return nil, err
	}
	p.AblationNS = in.PlainNS - in.RemovedNS - in.FusedNS
	return p, nil
}

// removedInput gathers PredictRemoved's input from the timeline check, the
// Rotating replays alone and the kernel's runs, or says why it cannot.
func removedInput(tc *TimelineCheck, replaced []string, kernels map[string]int, rot map[string]Times) (RemovedInput, error) {
	var in RemovedInput
	var last *replay.TimelineResult
	if tc.Removed != nil {
		last = tc.Removed.Last
	}
	if err := atCapPair(tc.Plain, last, "removed"); err != nil {
		return in, err
	}
	in.PowerW, in.PlainNS, in.PlainMHz = tc.Plain.Energy.Watts, tc.PlainMeanNS, tc.PlainMHz
	in.RemovedNS, in.RemovedMHz = tc.Removed.MeanNS, tc.Removed.MHz
	var err error
	if in.ReplacedNS, in.ReplacedJ, err = inContext(tc.Plain, replaced, rot); err != nil {
		return in, fmt.Errorf("the plain timeline: %w", err)
	}
	if in.FusedNS, in.FusedJ, err = kernelRuns(kernels, rot); err != nil {
		return in, err
	}
	in.AloneMHz = aloneMHz(rot, replaced, kernels)
	return in, nil
}
