package replay

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kreplay/kreplay/energy"
)

// The two duty-cycled windows solve for the energy of one launch with the
// gap's energy cancelled; windows that cannot be reconciled are an error.
func TestDutyResult(t *testing.T) {
	// A 200 µs launch drawing 850 W is 0.17 J; a gap of 2 ms at 150 W is 0.3 J.
	const e, gapJ, per = 0.17, 0.3, 200e3
	tests := []struct {
		name    string
		ja, jb  float64 // J per cycle of the burst and single windows
		n       int
		wantErr string
	}{
		{"consistent", 10*e + gapJ, e + gapJ, 10, ""},
		{"two launches", 2*e + gapJ, e + gapJ, 4, "windows disagree"}, // solves to a negative gap power
		{"single costs more than a burst", e + gapJ, 10*e + gapJ, 10, "windows disagree"},
	}
	for _, tt := range tests {
		cycleB := 0.0022
		ra := energy.Reading{Method: energy.MethodEnergyCounter, Calls: 100, JoulesPerCall: tt.ja, Watts: tt.ja / 0.0042, Seconds: 0.42, Ticks: 11}
		rb := energy.Reading{Method: energy.MethodEnergyCounter, Calls: 400, JoulesPerCall: tt.jb, SecondsPerCall: cycleB, Seconds: 0.88}
		got, err := dutyResult(ra, rb, tt.n, 2*time.Millisecond, 0.5, per)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if math.Abs(got.JoulesPerOp-e) > 1e-12 {
			t.Errorf("%s: %g J per launch, want %g", tt.name, got.JoulesPerOp, e)
		}
		if want := gapJ / (cycleB - per*1e-9); math.Abs(got.Duty.GapWatts-want) > 1e-9 {
			t.Errorf("%s: gap %g W, want %g", tt.name, got.Duty.GapWatts, want)
		}
		if math.Abs(got.Watts-850) > 1e-6 || got.Method != "duty-cycled energy-counter" || got.Throttled || got.Ops != 100*float64(tt.n) {
			t.Errorf("%s: %+v", tt.name, got)
		}
	}
}

func TestPowerCapped(t *testing.T) {
	tests := []struct {
		throttled, samples int
		want               bool
	}{
		{0, 100, false},
		{1, 100, false}, // one sample at the window's start
		{5, 100, true},
		{60, 100, true},
	}
	for _, tt := range tests {
		s := energy.Summary{Samples: tt.samples, ThrottledSamples: tt.throttled}
		if got := powerCapped(s); got != tt.want {
			t.Errorf("%d of %d throttled: capped %v, want %v", tt.throttled, tt.samples, got, tt.want)
		}
	}
}
