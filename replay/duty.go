package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kreplay/kreplay/energy"
)

// A heavy kernel replayed back to back for a whole energy window holds the
// GPU at its power limit: the software power cap lowers the SM clock, and
// the energy of a launch at the capped clock is not the energy it has in a
// real inference, where it runs at the boost clock between kernels that
// draw less (the probe: `scripts/gpu/energy_probe.py`; see
// results/h100/capture/README.md). Such a signature is measured again
// duty-cycled: bursts of launches, each followed by an idle gap, so that
// the average power stays under the cap.
//
// The gap's energy is not guessed: two windows with the same gap, one of
// bursts of n launches (a) and one of single launches (b), give per cycle
// J_a = n·e + G and J_b = e + G, where G is the energy of the gap; so
// e = (J_a − J_b)/(n − 1). The one assumption is that the gap draws the same
// in both windows (the same idle time after the GPU's work, at the same
// clocks); DutyEnergy.GapWatts reports what it drew.

// DutyEnergy is how a signature's energy was measured duty-cycled.
type DutyEnergy struct {
	// Duty is the share of each cycle spent on the burst (planned, from
	// the timed median); Burst the launches per burst, GapNS the idle gap.
	Duty  float64 `json:"duty"`
	Burst int     `json:"burst"`
	GapNS float64 `json:"gap_ns"`
	// BurstJoules and SingleJoules are the energies per cycle of the two
	// windows (bursts of Burst launches, and single launches).
	BurstJoules  float64 `json:"burst_joules"`
	SingleJoules float64 `json:"single_joules"`
	// GapWatts is the gap's average power, (SingleJoules − e)/(cycle − t).
	GapWatts float64 `json:"gap_watts"`
	// BurstWatts is the burst window's average power, gaps included.
	BurstWatts float64 `json:"burst_watts"`
	// BackToBackJoulesPerOp and BackToBackWatts are the capped window's.
	BackToBackJoulesPerOp float64 `json:"back_to_back_joules_per_op"`
	BackToBackWatts       float64 `json:"back_to_back_watts"`
}

// dutyPlans are the duties tried in turn while the burst window still
// runs power-capped.
var dutyPlans = []float64{0.6, 0.35, 0.2}

// minCappedShare is the share of NVML samples in a window with a power or
// thermal slowdown above which the window counts as capped: a single
// sample flips now and then at the start of a window.
const minCappedShare = 0.05

// powerCapped reports whether a window's clocks were held down by a power
// or thermal cap for a real share of it.
func powerCapped(s energy.Summary) bool {
	return s.Throttled() && s.ThrottledFraction() >= minCappedShare
}

// measureDuty measures the energy of one launch duty-cycled (see
// DutyEnergy), with bursts of at least 2 launches and about 5 ms. It
// returns an error when every duty in dutyPlans still runs capped, or the
// two windows do not give a positive energy and a gap power between zero
// and the burst window's power.
func (d *Device) measureDuty(t *timer, per float64, batch, ticks int, o Options) (*Energy, error) {
	defer t.tm.enter(t.tm.enter(partEnergyDuty))
	n := max(batch, 2)
	if t.graph != nil && n != batch {
		if err := t.capture(n); err != nil {
			return nil, fmt.Errorf("duty-cycled energy: capturing %d launches: %w", n, err)
		}
	}
	s := t.d.stream
	burst := func(k int) func() error {
		return func() error {
			var err error
			if k > 1 {
				err = t.enqueue(k)
			} else {
				err = t.launchN(1)
			}
			if err != nil {
				return err
			}
			return s.Synchronize()
		}
	}
	var last error
	for _, duty := range dutyPlans {
		gap := time.Duration(per * float64(n) * (1 - duty) / duty)
		mo := energy.MeasureOptions{MinTicks: ticks, Warmup: o.EnergyWarmup}
		t.tm.dutyWindow()
		ra, err := d.Meter.Measure(context.Background(), withGap(burst(n), gap), mo)
		if err != nil {
			return nil, err
		}
		if powerCapped(ra.States) {
			last = fmt.Errorf("duty-cycled energy: still power-capped at duty %.2f (%s)", duty, ra.States.ThrottleReasons)
			continue
		}
		t.tm.dutyWindow()
		rb, err := d.Meter.Measure(context.Background(), withGap(burst(1), gap), mo)
		if err != nil {
			return nil, err
		}
		return dutyResult(ra, rb, n, gap, duty, per)
	}
	return nil, last
}

// dutyResult solves the two windows for the energy of one launch.
func dutyResult(ra, rb energy.Reading, n int, gap time.Duration, duty, per float64) (*Energy, error) {
	if ra.Calls <= 0 || rb.Calls <= 0 {
		return nil, errors.New("duty-cycled energy: a window holds no cycle")
	}
	e := (ra.JoulesPerCall - rb.JoulesPerCall) / float64(n-1)
	cycleB := rb.SecondsPerCall - per*1e-9
	gapW := 0.0
	if cycleB > 0 {
		gapW = (rb.JoulesPerCall - e) / cycleB
	}
	if e <= 0 || gapW < 0 || gapW > ra.Watts {
		return nil, fmt.Errorf("duty-cycled energy: windows disagree: %.4g J per burst of %d, %.4g J per single launch (gap power %.0f W)",
			ra.JoulesPerCall, n, rb.JoulesPerCall, gapW)
	}
	en := energyOf(ra, n)
	en.JoulesPerOp = e
	en.Watts = e / (per * 1e-9)
	en.Method = "duty-cycled " + ra.Method.String()
	en.Seconds += rb.Seconds
	en.Throttled = false // powerCapped(ra.States) was false
	en.Duty = &DutyEnergy{Duty: duty, Burst: n, GapNS: float64(gap.Nanoseconds()),
		BurstJoules: ra.JoulesPerCall, SingleJoules: rb.JoulesPerCall, GapWatts: gapW, BurstWatts: ra.Watts}
	return &en, nil
}

// withGap runs work, then waits gap on the host, spinning the last
// stretch so that the gap is close to what was asked.
func withGap(work func() error, gap time.Duration) func() error {
	return func() error {
		if err := work(); err != nil {
			return err
		}
		end := time.Now().Add(gap)
		if gap > 2*time.Millisecond {
			time.Sleep(gap - time.Millisecond)
		}
		for time.Now().Before(end) {
		}
		return nil
	}
}
