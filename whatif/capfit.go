package whatif

import (
	"fmt"

	"github.com/kreplay/kreplay/replay"
)

// CapFit is what the predictions at the cap from two runs of the
// baseline there (again.go, removed.go) have in common: the kept work
// (the other kernels in context and the gaps) fitted through the two
// runs, the kernel's runs, and the what-if's run where it draws the power
// the cap held.
type CapFit struct {
	// KeptNS (a) and ClockNS (b, ns x MHz) give the kept work's time
	// KG(s) = a + b/s; KeptJ its energy at the lower-clocked run for the
	// removed model, at the plain run for the again model, and
	// EnergySlope (J per MHz) its slope.
	KeptNS      float64 `json:"kept_ns"`
	ClockNS     float64 `json:"clock_ns_mhz"`
	KeptJ       float64 `json:"kept_j"`
	EnergySlope float64 `json:"energy_j_per_mhz"`
	// FusedNS and FusedJ are the kernel's runs in context: its time and
	// energy alone in the Rotating mode, times the runs.
	FusedNS float64 `json:"fused_ns"`
	FusedJ  float64 `json:"fused_j"`
	// AloneMHz is the clock the replays alone ran at (NVML); the
	// replaced signatures' and the kernel's energies are scaled by the
	// clock over it. 0: not scaled (the clock unknown).
	AloneMHz float64 `json:"alone_mhz,omitempty"`
	// NewMHz, NewNS and NewJ are the what-if's run at the cap; SavingNS
	// and SavingJ its savings against the plain run.
	NewMHz   float64 `json:"new_mhz"`
	NewNS    float64 `json:"new_ns"`
	NewJ     float64 `json:"new_j"`
	SavingNS float64 `json:"saving_ns"`
	SavingJ  float64 `json:"saving_j"`
}

// fitTime fits KG(s) = a + b/s through the kept work's time at two
// clocks, lo below hi, or errs where it is not faster at the higher one.
func (f *CapFit) fitTime(kgLo, mhzLo, kgHi, mhzHi float64) error {
	f.ClockNS = (kgLo - kgHi) / (1/mhzLo - 1/mhzHi)
	if f.ClockNS <= 0 {
		return fmt.Errorf("the kept work took %.4g ms at %.0f MHz and %.4g ms at %.0f: not faster at the higher clock",
			kgLo/1e6, mhzLo, kgHi/1e6, mhzHi)
	}
	f.KeptNS = kgHi - f.ClockNS/mhzHi
	return nil
}

// solve puts the what-if's run, the kept work plus the kernel's runs, at
// the clock between lo and hi MHz where it draws powerW, the kept work's
// energy the line through KeptJ at mhz0 with EnergySlope; plainNS is the
// plain run's time the savings are taken against.
func (f *CapFit) solve(powerW, plainNS, mhz0, lo, hi float64) error {
	w := powerW / 1e9 // J per ns
	kg := func(mhz float64) float64 { return f.KeptNS + f.ClockNS/mhz }
	ekg := func(mhz float64) float64 { return f.KeptJ + f.EnergySlope*(mhz-mhz0) }
	// Above the root the run would draw less than the cap holds.
	under := func(mhz float64) bool {
		return w*(kg(mhz)+f.FusedNS) > ekg(mhz)+f.FusedJ*clockScale(mhz, f.AloneMHz)
	}
	if !under(lo) || under(hi) {
		return fmt.Errorf("no clock between %.0f and %.0f MHz holds the power at %.0f W", lo, hi, powerW)
	}
	f.NewMHz = bisect(func(mhz float64) bool { return !under(mhz) }, lo, hi)
	f.NewNS = kg(f.NewMHz) + f.FusedNS
	f.NewJ = w * f.NewNS
	f.SavingNS, f.SavingJ = plainNS-f.NewNS, w*(plainNS-f.NewNS)
	return nil
}

// clockScale is the factor on an energy priced alone at aloneMHz for a
// run at mhz: their ratio, or 1 when aloneMHz is unknown.
func clockScale(mhz, aloneMHz float64) float64 {
	if aloneMHz <= 0 {
		return 1
	}
	return mhz / aloneMHz
}

// atCapPair says why the plain timeline's last round and another's (its
// name) cannot feed a model at the cap: one missing, no energies, or one
// not throttled at the power cap, whose power the models hold; nil when
// they can.
func atCapPair(plain, other *replay.TimelineResult, name string) error {
	switch {
	case plain == nil || other == nil:
		return fmt.Errorf("no %s timeline", name)
	case plain.Energy == nil || other.Energy == nil:
		return fmt.Errorf("the timelines' energies were not measured (-energy)")
	case !plain.Energy.Throttled || !other.Energy.Throttled:
		return fmt.Errorf("the plain or the %s timeline is not at the power cap (plain throttled %v, %s %v): the model holds the cap's power",
			name, plain.Energy.Throttled, name, other.Energy.Throttled)
	}
	return nil
}
