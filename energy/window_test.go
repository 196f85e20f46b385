package energy

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// recordCounter simulates what the poller records from a GPU drawing
// constant power watts: the counter publishes the accumulated energy every
// period (+- jitter), and is read every poll.
func recordCounter(watts float64, period, jitter, poll, length time.Duration, seed uint64) []counterRead {
	rng := rand.New(rand.NewPCG(seed, 1))
	// Publication instants of the counter.
	var pub []time.Duration
	for p := time.Duration(0); p < length+period; {
		j := time.Duration(0)
		if jitter > 0 {
			j = time.Duration(rng.Int64N(int64(2*jitter))) - jitter
		}
		p += period + j
		pub = append(pub, p)
	}
	var reads []counterRead
	k := -1 // last publication visible
	base := uint64(5_000_000)
	for t := time.Duration(0); t <= length; t += poll {
		for k+1 < len(pub) && pub[k+1] <= t {
			k++
		}
		mj := base
		if k >= 0 {
			mj += uint64(watts * pub[k].Seconds() * 1000)
		}
		reads = append(reads, counterRead{t: at(t), mj: mj})
	}
	return reads
}

func TestTicksOf(t *testing.T) {
	ms := time.Millisecond
	reads := []counterRead{
		{at(0), 100}, {at(1 * ms), 100}, {at(2 * ms), 130}, {at(3 * ms), 130},
		{at(4 * ms), 130}, {at(5 * ms), 170}, {at(6 * ms), 170},
	}
	ticks, err := ticksOf(reads)
	if err != nil {
		t.Fatal(err)
	}
	want := []tick{{at(1 * ms), at(2 * ms), 130}, {at(4 * ms), at(5 * ms), 170}}
	if len(ticks) != len(want) {
		t.Fatalf("got %d ticks, want %d", len(ticks), len(want))
	}
	for i := range want {
		if ticks[i] != want[i] {
			t.Errorf("tick %d = %+v, want %+v", i, ticks[i], want[i])
		}
	}
	if got := ticks[0].mid(); !got.Equal(at(1500 * time.Microsecond)) {
		t.Errorf("mid = %v", got)
	}

	_, err = ticksOf([]counterRead{{at(0), 100}, {at(ms), 99}})
	if !errors.Is(err, errCounterBackwards) {
		t.Errorf("backwards counter: err = %v", err)
	}
}

func TestWindowRule(t *testing.T) {
	ms := time.Millisecond
	// Ticks every 100 ms, observed with a 1 ms poll.
	var ticks []tick
	for i := 1; i <= 30; i++ {
		ticks = append(ticks, tick{prev: at(time.Duration(i)*100*ms - ms), at: at(time.Duration(i) * 100 * ms), mj: uint64(i * 10)})
	}
	tests := []struct {
		name        string
		rule        windowRule
		open, close int
		ok          bool
	}{
		{"first tick, 5 ticks", windowRule{notBefore: at(0), minTicks: 5}, 0, 5, true},
		{"warmup skips ticks", windowRule{notBefore: at(250 * ms), minTicks: 5}, 2, 7, true},
		{"prev equal to notBefore opens", windowRule{notBefore: at(299 * ms), minTicks: 1}, 2, 3, true},
		{"change possibly before notBefore does not open", windowRule{notBefore: at(299*ms + 1), minTicks: 1}, 3, 4, true},
		{"duration dominates", windowRule{notBefore: at(0), minTicks: 1, minDur: 1000 * ms}, 0, 10, true},
		{"ticks dominate", windowRule{notBefore: at(0), minTicks: 20, minDur: 1000 * ms}, 0, 20, true},
		{"too few ticks", windowRule{notBefore: at(0), minTicks: 30}, 0, 0, false},
		{"nothing after notBefore", windowRule{notBefore: at(10 * time.Second), minTicks: 1}, 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			open, close, ok := tc.rule.find(ticks)
			if ok != tc.ok || (ok && (open != tc.open || close != tc.close)) {
				t.Errorf("find = %d, %d, %v; want %d, %d, %v", open, close, ok, tc.open, tc.close, tc.ok)
			}
		})
	}
}

func TestCallsIn(t *testing.T) {
	ms := time.Millisecond
	// Calls of 10 ms back to back with 1 ms of loop overhead: period 11 ms.
	var calls []callSpan
	for i := range 100 {
		s := at(time.Duration(i) * 11 * ms)
		calls = append(calls, callSpan{s, s.Add(10 * ms)})
	}
	tests := []struct {
		name     string
		from, to time.Time
		frac     float64
		complete int
	}{
		{"whole calls", at(0), at(110 * ms), 10, 10},
		{"half calls at each end", at(5500 * time.Microsecond), at(115500 * time.Microsecond), 10, 9},
		{"inside one call", at(2200 * time.Microsecond), at(4400 * time.Microsecond), 0.2, 0},
		{"before all calls", at(-100 * ms), at(-50 * ms), 0, 0},
		{"last call uses its end", at(99 * 11 * ms), at(99*11*ms + 5*ms), 0.5, 0},
		{"window beyond the calls", at(0), at(2 * time.Second), 100, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			frac, complete := callsIn(calls, tc.from, tc.to)
			if math.Abs(frac-tc.frac) > 1e-9 || complete != tc.complete {
				t.Errorf("callsIn = %.6f, %d; want %.6f, %d", frac, complete, tc.frac, tc.complete)
			}
		})
	}
}

// TestCounterReadingRecorded checks tick alignment and per-call energy on
// recorded counter sequences: constant power, a counter publishing about
// every 100 ms with jitter, read every poll.
func TestCounterReadingRecorded(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name       string
		watts      float64
		jitter     time.Duration
		poll       time.Duration
		minTicks   int
		callPeriod time.Duration
	}{
		{"H100 busy, 101 ticks", 650, 5 * ms, ms, DefaultMinTicks, 7 * ms},
		{"idle, 101 ticks", 90, 10 * ms, ms, DefaultMinTicks, 0},
		{"coarse poll", 400, 20 * ms, 5 * ms, 50, 33 * ms},
		{"long calls", 500, 5 * ms, ms, 101, 450 * ms},
		{"few ticks", 300, 0, ms, 3, 3 * ms},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			length := time.Duration(tc.minTicks+5) * 130 * ms
			reads := recordCounter(tc.watts, 100*ms, tc.jitter, tc.poll, length, uint64(i))
			ticks, err := ticksOf(reads)
			if err != nil {
				t.Fatal(err)
			}
			var calls []callSpan
			if tc.callPeriod > 0 {
				for s := time.Duration(0); s < length; s += tc.callPeriod {
					calls = append(calls, callSpan{at(s), at(s + tc.callPeriod - 100*time.Microsecond)})
				}
			}
			r, err := counterReading(ticks, calls, windowRule{notBefore: at(0), minTicks: tc.minTicks})
			if err != nil {
				t.Fatal(err)
			}
			if r.Method != MethodEnergyCounter || r.Ticks != tc.minTicks {
				t.Errorf("method %v ticks %d, want energy-counter %d", r.Method, r.Ticks, tc.minTicks)
			}
			// The naive error would be up to one tick (1/Ticks); the
			// aligned window is limited by the time resolution only.
			bound := r.TimeUncertainty.Seconds()/r.Seconds + 1/(tc.watts*r.Seconds) // + 1 mJ rounding
			if rel := math.Abs(r.Watts-tc.watts) / tc.watts; rel > bound*1.01 {
				t.Errorf("Watts = %.4f, want %.1f (rel err %.2e > bound %.2e)", r.Watts, tc.watts, rel, bound)
			}
			if r.TimeUncertainty > tc.poll {
				t.Errorf("TimeUncertainty %v > poll %v", r.TimeUncertainty, tc.poll)
			}
			if want := 1 / float64(tc.minTicks); math.Abs(r.TickEnergyShare-want) > 1e-12 {
				t.Errorf("TickEnergyShare = %g, want %g", r.TickEnergyShare, want)
			}
			if tc.callPeriod == 0 {
				if r.Calls != 0 || r.JoulesPerCall != 0 {
					t.Errorf("idle: Calls %g JoulesPerCall %g", r.Calls, r.JoulesPerCall)
				}
				return
			}
			wantCalls := r.Seconds / tc.callPeriod.Seconds()
			if math.Abs(r.Calls-wantCalls) > 1e-6*wantCalls {
				t.Errorf("Calls = %.6f, want %.6f", r.Calls, wantCalls)
			}
			if int(r.Calls) < r.CompleteCalls || r.CompleteCalls < int(r.Calls)-2 {
				t.Errorf("CompleteCalls %d vs Calls %.3f", r.CompleteCalls, r.Calls)
			}
			wantJ := tc.watts * tc.callPeriod.Seconds()
			if rel := math.Abs(r.JoulesPerCall-wantJ) / wantJ; rel > bound*1.01 {
				t.Errorf("JoulesPerCall = %.6f, want %.6f (rel %.2e)", r.JoulesPerCall, wantJ, rel)
			}
			if math.Abs(r.SecondsPerCall-tc.callPeriod.Seconds()) > 1e-9 {
				t.Errorf("SecondsPerCall = %v, want %v", r.SecondsPerCall, tc.callPeriod.Seconds())
			}
		})
	}
}

// TestNaiveVersusAligned shows why alignment matters: two reads 1 s apart
// without alignment can be off by a whole tick (10% of 10 ticks).
func TestNaiveVersusAligned(t *testing.T) {
	ms := time.Millisecond
	reads := recordCounter(500, 100*ms, 0, ms, 1500*ms, 7)
	// Naive: reads at 100 ms (just after a tick) and 1099 ms (just before
	// one), 0.999 s apart, miss almost a whole tick.
	naive := float64(reads[1099].mj-reads[100].mj) / 1000 / 0.999
	if math.Abs(naive-500) < 40 {
		t.Errorf("naive read pair unexpectedly accurate: %.1f W", naive)
	}
	ticks, _ := ticksOf(reads)
	r, err := counterReading(ticks, nil, windowRule{notBefore: at(0), minTicks: 10})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Watts-500) > 1 {
		t.Errorf("aligned: %.2f W, want 500", r.Watts)
	}
}

func TestCounterReadingNoWindow(t *testing.T) {
	reads := recordCounter(500, 100*time.Millisecond, 0, time.Millisecond, 500*time.Millisecond, 1)
	ticks, _ := ticksOf(reads)
	_, err := counterReading(ticks, nil, windowRule{notBefore: at(0), minTicks: 10})
	if !errors.Is(err, errNoWindow) {
		t.Errorf("err = %v, want errNoWindow", err)
	}
}

// powerStates records sampled power every interval with the given power
// function.
func powerStates(interval, length time.Duration, src PowerSource, power func(t time.Duration) float64) []State {
	var states []State
	for t := time.Duration(0); t <= length; t += interval {
		states = append(states, State{Time: at(t), PowerW: power(t), PowerSource: src})
	}
	return states
}

func TestPowerReadingFallback(t *testing.T) {
	ms := time.Millisecond
	ramp := func(t time.Duration) float64 { return 100 + 400*t.Seconds() } // linear: trapezoid exact
	tests := []struct {
		name      string
		states    []State
		notBefore time.Time
		minDur    time.Duration
		wantJ     float64
		wantSec   float64
		wantTicks int
	}{
		{"constant 300 W", powerStates(10*ms, 2*time.Second, PowerInstant, func(time.Duration) float64 { return 300 }), at(0), time.Second, 300, 1, 100},
		{"linear ramp from 0.5 s", powerStates(10*ms, 2*time.Second, PowerAverage, ramp), at(500 * ms), time.Second, 100 + 400*1.0, 1, 100},
		{"window rounds up to a sample", powerStates(30*ms, 2*time.Second, PowerInstant, func(time.Duration) float64 { return 200 }), at(0), 1000 * ms, 200 * 1.02, 1.02, 34},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls []callSpan
			for s := time.Duration(0); s < 3*time.Second; s += 20 * ms {
				calls = append(calls, callSpan{at(s), at(s + 19*ms)})
			}
			r, err := powerReading(tc.states, calls, tc.notBefore, tc.minDur)
			if err != nil {
				t.Fatal(err)
			}
			if r.Method != MethodPowerIntegral {
				t.Errorf("Method = %v", r.Method)
			}
			if math.Abs(r.Joules-tc.wantJ) > 1e-6 || math.Abs(r.Seconds-tc.wantSec) > 1e-9 || r.Ticks != tc.wantTicks {
				t.Errorf("got %.6f J %.6f s %d ticks; want %.6f J %.6f s %d ticks", r.Joules, r.Seconds, r.Ticks, tc.wantJ, tc.wantSec, tc.wantTicks)
			}
			if want := r.Seconds / 0.020; math.Abs(r.Calls-want) > 1e-6 {
				t.Errorf("Calls = %g, want %g", r.Calls, want)
			}
			if r.PowerSource != tc.states[0].PowerSource {
				t.Errorf("PowerSource = %v", r.PowerSource)
			}
		})
	}
	if _, err := powerReading(powerStates(10*ms, 500*ms, PowerInstant, ramp), nil, at(0), time.Second); !errors.Is(err, errNoWindow) {
		t.Errorf("short recording: err = %v", err)
	}
}
