package replay

import (
	"errors"
	"math"
	"testing"

	"github.com/kreplay/kreplay/energy"
)

// The pause is skipped only after a measurement known to have drawn less
// than the share of a known power limit, unthrottled, without energy
// windows; whatever is unknown takes it.
func TestPauseNeeded(t *testing.T) {
	const limit = 700
	cool := &energy.Summary{Samples: 12, MeanPowerW: 128, MaxPowerW: 134}
	hot := &energy.Summary{Samples: 40, MeanPowerW: 470, MaxPowerW: 490}
	atShare := &energy.Summary{Samples: 3, MaxPowerW: 350}
	throttled := &energy.Summary{Samples: 12, MaxPowerW: 140, ThrottledSamples: 1, ThrottleReasons: energy.ReasonSWPowerCap}
	noPower := &energy.Summary{Samples: 12} // states without a power reading
	noStates := &energy.Summary{}
	for _, tc := range []struct {
		name      string
		prev      *energy.Summary
		limitW    float64
		share     float64
		energyRan bool
		err       error
		want      bool
	}{
		{"a short kernel at waiting power", cool, limit, 0.5, false, nil, false},
		{"a GEMM at 70% of the limit", hot, limit, 0.5, false, nil, true},
		{"exactly at the share", atShare, limit, 0.5, false, nil, true},
		{"just under the share", &energy.Summary{Samples: 3, MaxPowerW: 349.9}, limit, 0.5, false, nil, false},
		{"a higher share lets the GEMM pass", hot, limit, 0.8, false, nil, false},
		{"a negative share: always", cool, limit, -1, false, nil, true},
		{"a NaN share: always", cool, limit, math.NaN(), false, nil, true},
		{"share 0: any power read", cool, limit, 0, false, nil, true},
		{"throttled at low power", throttled, limit, 0.5, false, nil, true},
		{"energy windows ran", cool, limit, 0.5, true, nil, true},
		{"nothing known of the previous (first, failed, other work)", nil, limit, 0.5, false, nil, true},
		{"no power limit", cool, 0, 0.5, false, nil, true},
		{"a NaN power limit", cool, math.NaN(), 0.5, false, nil, true},
		{"the limit or the sampler failed", cool, limit, 0.5, false, errors.New("NVML reads failed"), true},
		{"states without power", noPower, limit, 0.5, false, nil, true},
		{"no states", noStates, limit, 0.5, false, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pauseNeeded(tc.prev, tc.limitW, tc.share, tc.energyRan, tc.err); got != tc.want {
				t.Errorf("pauseNeeded(%+v, %g, %g, %v, %v) = %v, want %v", tc.prev, tc.limitW, tc.share, tc.energyRan, tc.err, got, tc.want)
			}
		})
	}
}

// The device keeps what its last measurement left for the next one only
// until it is used, or until other work runs through Do; do (measuring,
// preparing, releasing) keeps it. A pause of 0 or less is never taken.
func TestPauseFirstRemembers(t *testing.T) {
	d := &Device{jobs: make(chan func())}
	done := make(chan struct{})
	go func() { // the device's goroutine, without CUDA
		for job := range d.jobs {
			job()
		}
		close(done)
	}()
	defer func() { close(d.jobs); <-done }()
	o := Options{}
	o.defaults()
	cool := &Result{GPU: &energy.Summary{Samples: 5, MaxPowerW: 130}}
	hot := &Result{GPU: &energy.Summary{Samples: 5, MaxPowerW: 600}}
	h200 := func() (float64, error) { return 700, nil }
	noMeter := func() (float64, error) { return 0, errPowerLimit }
	withEnergy := o
	withEnergy.Energy = true
	never := Options{Pause: -1, PauseAbove: DefaultPauseAbove}
	// Each step remembers last (unless nil), then decides with o and limit.
	steps := []struct {
		name  string
		last  *Result
		lastO Options
		o     Options
		limit func() (float64, error)
		want  bool
	}{
		{"the device's first", nil, o, o, h200, true},
		{"after a cool one", cool, o, o, h200, false},
		{"used once: nothing known again", nil, o, o, h200, true},
		{"after a hot one", hot, o, o, h200, true},
		{"after a cool one whose energy windows ran", cool, withEnergy, o, h200, true},
		{"after a cool one, without an NVML meter (no limit)", cool, o, o, noMeter, true},
		{"-pause 0: never, even with nothing known", nil, o, never, h200, false},
		{"-pause 0: never, after a hot one", hot, o, never, h200, false},
	}
	for _, s := range steps {
		var got bool
		err := d.do(func() error {
			if s.last != nil {
				d.rememberPower(s.last, s.lastO)
			}
			got = d.pauseFirst(s.o, s.limit)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got != s.want {
			t.Errorf("%s: pause %v, want %v", s.name, got, s.want)
		}
	}
	// Do forgets; do keeps.
	known := func() (k bool) {
		d.do(func() error { k = d.after != nil; return nil })
		return k
	}
	d.do(func() error { d.rememberPower(cool, o); return nil })
	d.do(func() error { return nil })
	if !known() {
		t.Error("do forgot the last measurement")
	}
	d.Do(func() error { return nil })
	if known() {
		t.Error("Do kept the last measurement: work it ran could carry power over")
	}
	d.do(func() error { d.rememberPower(&Result{SamplerErr: "NVML reads failed"}, o); return nil })
	var a *powerAfter
	d.do(func() error { a = d.after; return nil })
	if a == nil || a.err == nil || a.gpu != nil {
		t.Errorf("a sampler error is remembered as unknown power: %+v", a)
	}
}
