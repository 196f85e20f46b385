package replay

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/kreplay/kreplay/energy"
)

// sampleAtOnce is sampleToTarget as it was before checks could wait: each
// check judged at once. The reference the waiting checks must match.
func sampleAtOnce(o Options, sample func() (float64, error), judge func(values []float64) []float64) *sampling {
	s := &sampling{}
	rule := stopRule{target: o.TargetRelCI, minTime: o.MinTime}
	for len(s.values) < o.MaxSamples {
		v, _ := sample()
		s.values = append(s.values, v)
		s.spans = append(s.spans, span{})
		if len(s.values) < o.MinSamples || len(s.values)%5 != 0 {
			continue
		}
		s.rel = relCI(summarize(judge(s.values), o.Confidence))
		if rule.check(s.rel, time.Minute) {
			s.converged = true
			return s
		}
	}
	return s
}

// flushCounter is a judge that, like reported's, makes the values of every
// sample taken so far available in one flush when a judging runs.
type flushCounter struct {
	kernel          func(i int) float64
	taken, upTo     int
	flushes, judged int
}

func (f *flushCounter) judge(values []float64, spans []span) func() []float64 {
	n := len(values)
	f.taken = n
	return func() []float64 {
		if f.upTo < f.taken {
			f.flushes++
			f.upTo = f.taken
		}
		f.judged++
		out := make([]float64, n)
		for i := range out {
			out[i] = f.kernel(i)
		}
		return out
	}
}

// Checks that wait end sampling at the same sample, converged or not,
// with the same last interval, as checks judged at once, on runs that
// converge early, late, after lucky intervals, or never; and they flush
// less.
func TestSampleToTargetWaitingChecks(t *testing.T) {
	o := Options{TargetRelCI: 0.01, Confidence: 0.95, MinSamples: 10, Budget: time.Minute}
	rng := rand.New(rand.NewPCG(1, 2))
	var flushes, atOnce, convergedRuns int
	for run := range 400 {
		o.MaxSamples = 20 + rng.IntN(200)
		// Kernel times whose noise shrinks at a random pace, with random
		// outliers: some runs settle within 1% early, some late, some lose
		// a first lucky interval, some never settle.
		noise, decay, spike := 0.2*rng.Float64(), rng.Float64(), rng.Float64()*0.3
		vals := make([]float64, o.MaxSamples)
		for i := range vals {
			v := 1000 * (1 + noise*math.Pow(decay, float64(i)/10)*rng.NormFloat64())
			if rng.Float64() < spike {
				v *= 1.5
			}
			vals[i] = v
		}
		kernel := func(i int) float64 { return vals[i] }
		events := func(k *int) func() (float64, error) {
			return func() (float64, error) { *k++; return 2000 + float64(*k%3), nil }
		}
		var i, j int
		fc := &flushCounter{kernel: kernel}
		got, err := sampleToTarget(o, events(&i), fc.judge)
		if err != nil {
			t.Fatal(err)
		}
		want := sampleAtOnce(o, events(&j), func(values []float64) []float64 {
			out := make([]float64, len(values))
			for k := range out {
				out[k] = kernel(k)
			}
			return out
		})
		if len(got.values) != len(want.values) || got.converged != want.converged || got.rel != want.rel {
			t.Fatalf("run %d: %d samples, converged %v, rel %g; at once %d, %v, %g",
				run, len(got.values), got.converged, got.rel, len(want.values), want.converged, want.rel)
		}
		checks := 0
		for n := o.MinSamples; n <= len(want.values); n++ {
			if n%5 == 0 {
				checks++
			}
		}
		if fc.judged != checks {
			t.Fatalf("run %d: %d checks judged, want all %d", run, fc.judged, checks)
		}
		if want.converged {
			convergedRuns++
		}
		flushes += fc.flushes
		atOnce += checks
	}
	if convergedRuns == 0 || convergedRuns == 400 {
		t.Errorf("%d of 400 runs converged: the runs should mix both", convergedRuns)
	}
	if flushes >= atOnce*3/4 {
		t.Errorf("%d flushes for %d checks: waiting saved too few", flushes, atOnce)
	}
	t.Logf("%d flushes where checks at once made %d; %d of 400 runs converged", flushes, atOnce, convergedRuns)
}

// A sampling cut by its budget at a check that cannot end it stops there,
// not converged, its interval that check's.
func TestSampleToTargetBudgetAtWaitingCheck(t *testing.T) {
	o := Options{TargetRelCI: 0.01, Confidence: 0.95, MinSamples: 10, MaxSamples: 100, Budget: time.Nanosecond}
	fc := &flushCounter{kernel: func(int) float64 { return 1000 }}
	s, err := sampleToTarget(o, func() (float64, error) { time.Sleep(time.Microsecond); return 1000, nil }, fc.judge)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.values) != 10 || s.converged || s.rel != 0 || fc.judged != 1 || fc.flushes != 1 {
		t.Errorf("%d samples, converged %v, rel %g, %d judged, %d flushes; want 10, false, 0, 1, 1",
			len(s.values), s.converged, s.rel, fc.judged, fc.flushes)
	}
}

// reported's judging, run after more samples were taken and more NVML
// states read, judges the samples and the states of its check's moment.
func TestReportedJudgingLater(t *testing.T) {
	var states []energy.State
	var spans []span
	events := []float64{1, 2, 3, 4, 5, 6}
	for i := range events {
		spans = append(spans, span{at(float64(i)), at(float64(i) + 0.9)})
		states = append(states, energy.State{Time: at(float64(i))})
	}
	p := &reported{kt: kernelTimes{batch: 1}, minKeep: 1}
	var recs []Ran
	for _, v := range events {
		recs = append(recs, Ran{Kind: "kernel", DurNS: uint64(10 * v)})
	}
	if err := p.kt.add(recs, len(events)); err != nil { // what rec.flush does on a GPU
		t.Fatal(err)
	}
	p.flushed = len(events)
	read := states[:3]
	p.nvml = func() []energy.State { return read }
	first := p.judge(events[:3], spans[:3])
	// Later: three more samples, and a throttled state read just after
	// the first check, which would claim the third sample's end.
	late := energy.State{Time: at(2.6), Reasons: energy.ReasonSWPowerCap}
	read = append(append(slices.Clone(states[:3]), late), states[3:]...)
	second := p.judge(events, spans)
	if got, want := first(), []float64{10, 20, 30}; !slices.Equal(got, want) {
		t.Errorf("first check judged %v, want %v (its own states: none throttled)", got, want)
	}
	if got, want := second(), []float64{10, 20, 40, 50, 60}; !slices.Equal(got, want) {
		t.Errorf("second check judged %v, want %v (the third sample throttled by the late state)", got, want)
	}
}
