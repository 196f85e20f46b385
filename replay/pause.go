package replay

import (
	"errors"
	"math"

	"github.com/kreplay/kreplay/energy"
)

// DefaultPauseAbove is Options.PauseAbove's default: a signature's pause
// is taken after one whose sampled power reached half the GPU's power
// limit. A guess, not a fitted constant: the limiter acts on power
// averaged over time, so a measurement well below the limit leaves
// nothing for it to carry into the next one, and one near it may.
const DefaultPauseAbove = 0.5

// powerAfter is what a signature's measurement leaves on its device for
// the next one's pause decision (pauseNeeded).
type powerAfter struct {
	// gpu is the NVML sampler's summary of the timed samples
	// (Result.GPU), nil without one.
	gpu *energy.Summary
	// energy is set when energy windows were asked for: they run for
	// seconds at the op's own power, after the sampled samples.
	energy bool
	// err is why the sampler's states are not known (Result.SamplerErr).
	err error
}

// errPowerLimit stands for a device without an NVML meter, whose power
// limit is unknown.
var errPowerLimit = errors.New("no NVML meter: the power limit is unknown")

// pauseNeeded reports whether a signature's measurement takes the idle
// pause (Options.Pause) before its warm-up, from what the previous
// measurement on the same device left: prev, the NVML sampler's summary
// of its timed samples (nil where none was read, or where no previous
// measurement is known: the device's first, one after a failed
// measurement or after other work on the device); limitW, the GPU's
// power limit in watts (0 or less: unknown); share, Options.PauseAbove
// (negative: always); energyRan, whether its energy windows ran; err, why
// its GPU state or the limit is not known. The pause is skipped only
// where everything is known and the previous measurement drew less than
// share of the limit at every sampled moment, unthrottled and without
// energy windows.
func pauseNeeded(prev *energy.Summary, limitW, share float64, energyRan bool, err error) bool {
	switch {
	case share < 0 || math.IsNaN(share), err != nil, prev == nil, !(limitW > 0), energyRan:
		return true
	case prev.Samples == 0 || !(prev.MaxPowerW > 0), prev.Throttled():
		return true // no power read, or the limiter (or heat) already acted
	}
	return prev.MaxPowerW >= share*limitW
}

// pauseFirst decides whether the measurement about to run on d takes the
// pause (o after defaults), from what the last one left (rememberPower)
// and the GPU's power limit (limit: powerLimit outside tests), and
// forgets what the last one left: until this measurement ends well, the
// next one pauses. Call inside do, as every use of d.after is: the
// device's goroutine serializes them.
func (d *Device) pauseFirst(o Options, limit func() (float64, error)) bool {
	a := d.after
	d.after = nil
	if o.Pause <= 0 {
		return false
	}
	if a == nil {
		return pauseNeeded(nil, 0, o.PauseAbove, false, nil)
	}
	w, err := limit()
	if err == nil {
		err = a.err
	}
	return pauseNeeded(a.gpu, w, o.PauseAbove, a.energy, err)
}

// powerLimit is the GPU's enforced power limit in watts, from NVML.
func (d *Device) powerLimit() (float64, error) {
	if d.Meter == nil {
		return 0, errPowerLimit
	}
	return d.Meter.PowerLimit()
}

// rememberPower keeps, for the next measurement's pause, what r's ended
// well leaves (o after defaults). Call inside do.
func (d *Device) rememberPower(r *Result, o Options) {
	a := &powerAfter{gpu: r.GPU, energy: o.Energy}
	if r.SamplerErr != "" {
		a.err = errors.New(r.SamplerErr)
	}
	d.after = a
}
