package energy

import (
	"fmt"
	"time"
)

// Summary condenses a sequence of [State]s, e.g. from a [Sampler] or the
// window of a [Reading].
type Summary struct {
	// Samples is the number of states; Span the time from first to last.
	Samples int
	Span    time.Duration
	// MeanPowerW (arithmetic mean over samples), MinPowerW and MaxPowerW
	// cover the states with a power reading. For energy use
	// [IntegratePower], which weights by time.
	MeanPowerW, MinPowerW, MaxPowerW float64
	// MinSMClockMHz, MaxSMClockMHz and MeanSMClockMHz cover the SM clock.
	MinSMClockMHz, MaxSMClockMHz uint32
	MeanSMClockMHz               float64
	// MaxTemperatureC is the highest temperature seen.
	MaxTemperatureC uint32
	// ThrottledSamples counts states with [State.Throttled].
	ThrottledSamples int
	// ThrottleReasons is the union of the throttling bits seen
	// (within [ThrottleReasons]); Reasons the union of all bits.
	ThrottleReasons ClockReasons
	Reasons         ClockReasons
}

// Throttled reports whether any state was throttled.
func (s Summary) Throttled() bool { return s.ThrottledSamples > 0 }

// ThrottledFraction is the share of states that were throttled.
func (s Summary) ThrottledFraction() float64 {
	if s.Samples == 0 {
		return 0
	}
	return float64(s.ThrottledSamples) / float64(s.Samples)
}

// String is a one-line summary for logs.
func (s Summary) String() string {
	return fmt.Sprintf("%d samples over %v: power mean %.1f W max %.1f W, SM %d-%d MHz, max %d C, throttled %d (%s)",
		s.Samples, s.Span.Round(time.Millisecond), s.MeanPowerW, s.MaxPowerW,
		s.MinSMClockMHz, s.MaxSMClockMHz, s.MaxTemperatureC, s.ThrottledSamples, s.ThrottleReasons)
}

// Summarize computes the [Summary] of states, which should be in time order.
func Summarize(states []State) Summary {
	var (
		sum          Summary
		powerN       int
		powerSum     float64
		clockSum     float64
		clockN       int
		first, last  time.Time
		haveTimeSpan bool
	)
	for _, s := range states {
		sum.Samples++
		if !haveTimeSpan {
			first, haveTimeSpan = s.Time, true
		}
		last = s.Time
		if s.PowerSource != PowerUnknown {
			if powerN == 0 || s.PowerW < sum.MinPowerW {
				sum.MinPowerW = s.PowerW
			}
			if powerN == 0 || s.PowerW > sum.MaxPowerW {
				sum.MaxPowerW = s.PowerW
			}
			powerN++
			powerSum += s.PowerW
		}
		if s.SMClockMHz > 0 {
			if clockN == 0 || s.SMClockMHz < sum.MinSMClockMHz {
				sum.MinSMClockMHz = s.SMClockMHz
			}
			sum.MaxSMClockMHz = max(sum.MaxSMClockMHz, s.SMClockMHz)
			clockN++
			clockSum += float64(s.SMClockMHz)
		}
		sum.MaxTemperatureC = max(sum.MaxTemperatureC, s.TemperatureC)
		sum.Reasons |= s.Reasons
		if s.Throttled() {
			sum.ThrottledSamples++
			sum.ThrottleReasons |= s.Reasons & ThrottleReasons
		}
	}
	if powerN > 0 {
		sum.MeanPowerW = powerSum / float64(powerN)
	}
	if clockN > 0 {
		sum.MeanSMClockMHz = clockSum / float64(clockN)
	}
	sum.Span = last.Sub(first)
	return sum
}

// IntegratePower returns the energy in joules of time-ordered states by the
// trapezoid rule over consecutive states that both have a power reading.
// Intervals next to a state without power are left out.
func IntegratePower(states []State) float64 {
	var j float64
	for i := 1; i < len(states); i++ {
		a, b := states[i-1], states[i]
		if a.PowerSource == PowerUnknown || b.PowerSource == PowerUnknown {
			continue
		}
		dt := b.Time.Sub(a.Time).Seconds()
		if dt > 0 {
			j += (a.PowerW + b.PowerW) / 2 * dt
		}
	}
	return j
}
