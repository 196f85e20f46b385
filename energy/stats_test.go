package energy

import (
	"math"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	ms := time.Millisecond
	st := func(d time.Duration, w float64, src PowerSource, sm uint32, temp uint32, r ClockReasons) State {
		return State{Time: at(d), PowerW: w, PowerSource: src, SMClockMHz: sm, MemClockMHz: 2619, TemperatureC: temp, Reasons: r}
	}
	tests := []struct {
		name   string
		states []State
		want   Summary
	}{
		{"empty", nil, Summary{}},
		{"idle", []State{
			st(0, 72, PowerInstant, 345, 31, ReasonGPUIdle),
			st(10*ms, 118, PowerInstant, 510, 32, ReasonGPUIdle),
		}, Summary{Samples: 2, Span: 10 * ms, MeanPowerW: 95, MinPowerW: 72, MaxPowerW: 118,
			MinSMClockMHz: 345, MaxSMClockMHz: 510, MeanSMClockMHz: 427.5, MaxTemperatureC: 32, Reasons: ReasonGPUIdle}},
		{"GEMMs hit the power cap", []State{
			st(0, 640, PowerInstant, 1980, 50, 0),
			st(10*ms, 700, PowerInstant, 1755, 55, ReasonSWPowerCap),
			st(20*ms, 0, PowerUnknown, 1620, 58, ReasonSWPowerCap|ReasonApplicationsClocks),
			st(30*ms, 695, PowerInstant, 0, 57, ReasonSyncBoost),
		}, Summary{Samples: 4, Span: 30 * ms, MeanPowerW: 2035.0 / 3, MinPowerW: 640, MaxPowerW: 700,
			MinSMClockMHz: 1620, MaxSMClockMHz: 1980, MeanSMClockMHz: (1980 + 1755 + 1620) / 3.0, MaxTemperatureC: 58,
			ThrottledSamples: 2, ThrottleReasons: ReasonSWPowerCap,
			Reasons: ReasonSWPowerCap | ReasonApplicationsClocks | ReasonSyncBoost}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Summarize(tc.states)
			if math.Abs(got.MeanPowerW-tc.want.MeanPowerW) < 1e-9 {
				got.MeanPowerW = tc.want.MeanPowerW
			}
			if math.Abs(got.MeanSMClockMHz-tc.want.MeanSMClockMHz) < 1e-9 {
				got.MeanSMClockMHz = tc.want.MeanSMClockMHz
			}
			if got != tc.want {
				t.Errorf("Summarize =\n %+v\nwant\n %+v", got, tc.want)
			}
			if got.Throttled() != (tc.want.ThrottledSamples > 0) {
				t.Errorf("Throttled = %v", got.Throttled())
			}
		})
	}
	if f := Summarize([]State{{Reasons: ReasonHWThermal}, {}, {}, {}}).ThrottledFraction(); f != 0.25 {
		t.Errorf("ThrottledFraction = %v, want 0.25", f)
	}
}

func TestIntegratePower(t *testing.T) {
	ms := time.Millisecond
	p := func(d time.Duration, w float64, src PowerSource) State {
		return State{Time: at(d), PowerW: w, PowerSource: src}
	}
	tests := []struct {
		name   string
		states []State
		want   float64
	}{
		{"none", nil, 0},
		{"one sample", []State{p(0, 100, PowerInstant)}, 0},
		{"constant", []State{p(0, 100, PowerInstant), p(500*ms, 100, PowerInstant), p(1000*ms, 100, PowerInstant)}, 100},
		{"ramp", []State{p(0, 100, PowerInstant), p(1000*ms, 300, PowerInstant)}, 200},
		{"uneven spacing", []State{p(0, 100, PowerAverage), p(100*ms, 200, PowerAverage), p(1100*ms, 200, PowerAverage)}, 15 + 200},
		{"gap without power skipped", []State{p(0, 100, PowerInstant), p(100*ms, 0, PowerUnknown), p(200*ms, 100, PowerInstant), p(300*ms, 100, PowerInstant)}, 10},
		{"out of order ignored", []State{p(100*ms, 100, PowerInstant), p(0, 100, PowerInstant)}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IntegratePower(tc.states); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("IntegratePower = %v, want %v", got, tc.want)
			}
		})
	}
}
