package replay

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kreplay/kreplay/energy"
)

func TestSampleToTarget(t *testing.T) {
	base := Options{TargetRelCI: 0.01, Confidence: 0.95, MinSamples: 10, MaxSamples: 40, Budget: time.Minute}
	errBoom := errors.New("boom")
	// luckyStart is ten samples alike, then 20% slower ones (a clock
	// that drops).
	luckyStart := func(i int) float64 {
		if i < 10 {
			return 1000
		}
		return 1200
	}
	noisy := func(i int) float64 { return float64(1000 + 1000*(i%2)) }
	for _, tc := range []struct {
		name   string
		sample func(i int) (float64, error)
		// judged, when set, gives the value a check judges for sample i
		// (the kernel time), instead of the event time sample gives.
		judged    func(i int) float64
		wantN     int
		converged bool
		err       error
	}{
		// Steady samples converge at the second check after MinSamples:
		// the first one's interval is confirmed 5 samples later.
		{name: "steady", sample: func(int) (float64, error) { return 1000, nil }, wantN: 15, converged: true},
		// The lucky first interval is not confirmed; sampling goes on
		// until the slower samples hold the median's interval at two
		// checks.
		{name: "lucky start", sample: func(i int) (float64, error) { return luckyStart(i), nil }, wantN: 40, converged: true},
		// Samples that swing by 2x never narrow to 1%: MaxSamples ends it.
		{name: "noisy", sample: func(i int) (float64, error) { return noisy(i), nil }, wantN: 40},
		{name: "error", sample: func(i int) (float64, error) {
			if i == 3 {
				return 0, errBoom
			}
			return 1000, nil
		}, wantN: 3, err: errBoom},
		// Steady event times do not stop sampling while the reported
		// kernel times had only a lucky start: the checks judge them.
		{name: "steady events, lucky start of kernel times", sample: func(int) (float64, error) { return 1000, nil },
			judged: luckyStart, wantN: 40, converged: true},
		// Noisy event times (launch gaps) do not hold sampling back once
		// the reported kernel times have converged.
		{name: "noisy events, steady kernel times", sample: func(i int) (float64, error) { return noisy(i), nil },
			judged: func(int) float64 { return 1000 }, wantN: 15, converged: true},
		{name: "steady events, noisy kernel times", sample: func(int) (float64, error) { return 1000, nil },
			judged: noisy, wantN: 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := 0
			var judge judgeFunc
			if tc.judged != nil {
				judge = func(values []float64, spans []span) func() []float64 {
					if len(spans) != len(values) {
						t.Fatalf("%d spans for %d values", len(spans), len(values))
					}
					return func() []float64 {
						out := make([]float64, len(values))
						for j := range out {
							out[j] = tc.judged(j)
						}
						return out
					}
				}
			}
			s, err := sampleToTarget(base, func() (float64, error) {
				v, err := tc.sample(i)
				i++
				return v, err
			}, judge)
			if len(s.values) != tc.wantN || s.converged != tc.converged || !errors.Is(err, tc.err) {
				t.Errorf("%d samples, converged %v, err %v; want %d, %v, %v", len(s.values), s.converged, err, tc.wantN, tc.converged, tc.err)
			}
			if s.converged && s.rel > base.TargetRelCI {
				t.Errorf("converged with relative CI %g", s.rel)
			}
			for j, sp := range s.spans {
				if sp.end.Before(sp.start) || j > 0 && sp.start.Before(s.spans[j-1].end) {
					t.Fatalf("span %d %v out of order", j, sp)
				}
			}
		})
	}
}

func TestStopRule(t *testing.T) {
	for _, tc := range []struct {
		name    string
		minTime time.Duration
		rels    []float64
		elapsed []time.Duration // per check; nil: all at a minute
		want    int             // the check that stops, from 1; 0: none
	}{
		{name: "two in a row", rels: []float64{0.005, 0.005}, want: 2},
		{name: "a lucky interval lost again", rels: []float64{0.005, 0.02, 0.005, 0.02, 0.009, 0.008}, want: 6},
		{name: "never within", rels: []float64{0.02, 0.5, math.Inf(1)}},
		{name: "at the target", rels: []float64{0.01, 0.01}, want: 2},
		{name: "not before MinTime", minTime: time.Second, rels: []float64{0.005, 0.005, 0.005, 0.005},
			elapsed: []time.Duration{0, 500 * time.Millisecond, time.Second, 2 * time.Second}, want: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rule := stopRule{target: 0.01, minTime: tc.minTime}
			got := 0
			for i, rel := range tc.rels {
				el := time.Minute
				if tc.elapsed != nil {
					el = tc.elapsed[i]
				}
				if rule.check(rel, el) {
					got = i + 1
					break
				}
			}
			if got != tc.want {
				t.Errorf("stopped at check %d, want %d", got, tc.want)
			}
		})
	}
}

// at is a time ms milliseconds after an arbitrary origin.
func at(ms float64) time.Time {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(ms * float64(time.Millisecond)))
}

func TestThrottledSamples(t *testing.T) {
	capped, hot, synced := energy.ReasonSWPowerCap, energy.ReasonHWThermal, energy.ReasonSyncBoost|energy.ReasonGPUIdle
	// NVML states every 10 ms: each stands for ±5 ms around it.
	every10 := func(reasons ...energy.ClockReasons) []energy.State {
		var out []energy.State
		for i, r := range reasons {
			out = append(out, energy.State{Time: at(10 * float64(i)), Reasons: r})
		}
		return out
	}
	spans := [][2]float64{{1, 2}, {4, 6}, {6, 14}, {15, 16}, {14.9, 15}, {-5, -1}, {40, 50}, {26, 27}}
	for _, tc := range []struct {
		name   string
		states []energy.State
		want   []bool
	}{
		{"no states", nil, []bool{false, false, false, false, false, false, false, false}},
		// The second state (5-15 ms) is capped; idle and sync boost do
		// not count as throttling.
		{"one capped", every10(0, capped, synced, 0), []bool{false, true, true, false, true, false, false, false}},
		// The last state holds to the end of time, the first from its start.
		{"last hot", every10(0, 0, 0, hot), []bool{false, false, false, false, false, false, true, true}},
		{"first capped", every10(capped, 0, 0, 0), []bool{true, true, false, false, false, true, false, false}},
		{"one state", every10(capped), []bool{true, true, true, true, true, true, true, true}},
		// A skipped tick: the states at 0 and 30 ms meet at 15.
		{"uneven", []energy.State{{Time: at(0), Reasons: capped}, {Time: at(30)}}, []bool{true, true, true, false, true, true, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sp []span
			for _, s := range spans {
				sp = append(sp, span{at(s[0]), at(s[1])})
			}
			if got := throttledSamples(sp, tc.states); !slices.Equal(got, tc.want) {
				t.Errorf("throttled %v, want %v (spans %v)", got, tc.want, spans)
			}
		})
	}
}

func TestDropThrottled(t *testing.T) {
	twelve := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	mark := func(idx ...int) []bool {
		out := make([]bool, len(twelve))
		for _, i := range idx {
			out[i] = true
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		throttled []bool
		minKeep   int
		want      []float64
		n         int
		discarded bool
	}{
		{"nothing known", nil, 10, twelve, 0, false},
		{"none throttled", mark(), 10, twelve, 0, false},
		{"enough left", mark(0, 11), 10, []float64{2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 2, true},
		{"too few left", mark(0, 5, 11), 10, twelve, 3, false},
		{"all throttled", mark(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), 1, twelve, 12, false},
		{"marks of other samples", []bool{true, false}, 1, twelve, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n, discarded := dropThrottled(twelve, tc.throttled, tc.minKeep)
			if !slices.Equal(got, tc.want) || n != tc.n || discarded != tc.discarded {
				t.Errorf("got %v, %d, %v; want %v, %d, %v", got, n, discarded, tc.want, tc.n, tc.discarded)
			}
		})
	}
}

func TestSetReported(t *testing.T) {
	// 11 unthrottled samples (medians 1005 and 905), then 8 throttled and
	// slower (the medians of all 19 are 1009 and 909).
	var events, kernel []float64
	var throttled []bool
	for i := 0; i < 19; i++ {
		e, k := 1000+float64(i), 900+float64(i)
		if i >= 11 {
			e, k = 1500, 1400
		}
		events, kernel, throttled = append(events, e), append(kernel, k), append(throttled, i >= 11)
	}
	for _, tc := range []struct {
		name          string
		kernel        []float64
		throttled     []bool
		minKeep       int
		target        float64
		samples       int
		median, kmed  float64
		all, kall     float64
		kept          bool
		converged     bool
		note, inShort string
	}{
		{name: "discarded", kernel: kernel, throttled: throttled, minKeep: 10, target: 0.5, samples: 11,
			median: 1005, kmed: 905, all: 1009, kall: 909, converged: true,
			note: "8 of 19 samples throttled, discarded", inShort: "(median of all 0.91µs)"},
		{name: "too few to discard", kernel: kernel, throttled: throttled, minKeep: 12, target: 1, samples: 19,
			median: 1009, kmed: 909, all: 1009, kall: 909, kept: true, converged: true,
			note: "8 of 19 samples throttled, kept", inShort: "kernel, events 1.01µs"},
		{name: "no CUPTI", throttled: throttled, minKeep: 10, target: 0.5, samples: 11,
			median: 1005, all: 1009, converged: true, note: "8 of 19 samples throttled, discarded", inShort: "(median of all 1.01µs)"},
		{name: "no NVML", kernel: kernel, minKeep: 10, target: 1, samples: 19,
			median: 1009, kmed: 909, all: 1009, kall: 909, converged: true, inShort: "(19 samples x 1"},
		{name: "short of the target", kernel: kernel, throttled: throttled, minKeep: 10, target: 0.0001, samples: 11,
			median: 1005, kmed: 905, all: 1009, kall: 909, note: "8 of 19 samples throttled, discarded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{ID: "x", Batch: 1}
			setReported(r, events, tc.kernel, tc.throttled, tc.minKeep, 0.95, tc.target)
			if r.Samples != tc.samples || r.MedianNS != tc.median || r.KernelMedianNS != tc.kmed ||
				r.MedianAllNS != tc.all || r.KernelMedianAllNS != tc.kall || r.ThrottledKept != tc.kept || r.Converged != tc.converged {
				t.Errorf("%d samples, medians %v %v, of all %v %v, kept %v, converged %v; want %d, %v %v, %v %v, %v, %v",
					r.Samples, r.MedianNS, r.KernelMedianNS, r.MedianAllNS, r.KernelMedianAllNS, r.ThrottledKept, r.Converged,
					tc.samples, tc.median, tc.kmed, tc.all, tc.kall, tc.kept, tc.converged)
			}
			// The interval is the reported value's.
			reported := events
			if tc.kernel != nil {
				reported = tc.kernel
			}
			kept, _, _ := dropThrottled(reported, tc.throttled, tc.minKeep)
			if want := relCI(summarize(kept, 0.95)); r.RelCI != want {
				t.Errorf("RelCI %v, want %v (of the reported value)", r.RelCI, want)
			}
			if want := cmp.Or(tc.kmed, tc.median); r.ReportedNS() != want {
				t.Errorf("ReportedNS %v, want %v", r.ReportedNS(), want)
			}
			if got := r.ThrottleNote(); got != tc.note {
				t.Errorf("note %q, want %q", got, tc.note)
			}
			if s := r.String(); !strings.Contains(s, tc.note) || !strings.Contains(s, tc.inShort) {
				t.Errorf("String() = %q, want %q and %q in it", s, tc.note, tc.inShort)
			}
		})
	}
}

func TestKernelTimes(t *testing.T) {
	// Two activities per invocation, two invocations per sample.
	recs := func(samples int, a, b uint64) []Ran {
		var out []Ran
		for i := 0; i < 2*samples; i++ {
			out = append(out, Ran{Kind: "kernel", Name: "k1", DurNS: a}, Ran{Kind: "memset", Name: "Memset", DurNS: b})
		}
		return out
	}
	k := kernelTimes{batch: 2}
	if err := k.add(nil, 0); err != nil || k.per != 0 {
		t.Fatalf("empty add: %v, per %d", err, k.per)
	}
	if err := k.add(recs(3, 10, 5)[1:], 3); err == nil {
		t.Error("11 records for 6 invocations: no error")
	}
	if err := k.add(recs(3, 10, 5), 3); err != nil {
		t.Fatal(err)
	}
	if err := k.add(recs(2, 20, 10), 2); err != nil {
		t.Fatal(err)
	}
	if err := k.add(recs(2, 20, 10), 1); err == nil {
		t.Error("8 records for 2 invocations of 2: no error")
	}
	if want := []float64{15, 15, 15, 30, 30}; !slices.Equal(k.values, want) {
		t.Errorf("values %v, want %v", k.values, want)
	}
	// Each invocation's own time: 6 of 15, 4 of 30; their median 15.
	if got := median(k.single, 0.95); got != 15 || len(k.single) != 10 {
		t.Errorf("single invocations %v, median %g; want 10, median 15", k.single, got)
	}
	// Means over 10 invocations: (6x10 + 4x20)/10 and (6x5 + 4x10)/10.
	want := []Ran{{Kind: "kernel", Name: "k1", DurNS: 14, PerCall: 1}, {Kind: "memset", Name: "Memset", DurNS: 7, PerCall: 1}}
	if got := k.activities(); !slices.Equal(got, want) {
		t.Errorf("activities %+v, want %+v", got, want)
	}
}

// TestReportedJudge checks that a check judges the reported value: the
// kernel times once CUPTI's records are in, less the samples that overlap
// a throttled NVML state when enough others remain.
func TestReportedJudge(t *testing.T) {
	events := []float64{1, 2, 3, 4, 5}
	var spans []span
	var states []energy.State
	for i := range events {
		spans = append(spans, span{at(float64(i)), at(float64(i) + 0.4)})
		st := energy.State{Time: at(float64(i))}
		if i == 2 {
			st.Reasons = energy.ReasonSWPowerCap
		}
		states = append(states, st)
	}
	kernelRecs := func() []Ran {
		var out []Ran
		for _, v := range events {
			out = append(out, Ran{Kind: "kernel", DurNS: uint64(10 * v)})
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		kernel  bool
		nvml    bool
		minKeep int
		want    []float64
	}{
		{"events", false, false, 3, events},
		{"events, throttled left out", false, true, 3, []float64{1, 2, 4, 5}},
		{"kernel", true, false, 3, []float64{10, 20, 30, 40, 50}},
		{"kernel, throttled left out", true, true, 3, []float64{10, 20, 40, 50}},
		{"kernel, too few to leave out", true, true, 5, []float64{10, 20, 30, 40, 50}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &reported{kt: kernelTimes{batch: 1}, minKeep: tc.minKeep}
			if tc.kernel {
				// What rec.flush does on a GPU.
				if err := p.kt.add(kernelRecs(), len(events)); err != nil {
					t.Fatal(err)
				}
				p.flushed = len(events)
			}
			if tc.nvml {
				p.nvml = func() []energy.State { return states }
			}
			if got := p.judge(events, spans)(); !slices.Equal(got, tc.want) {
				t.Errorf("judged %v, want %v", got, tc.want)
			}
		})
	}
}

// A batch mean that an outlier lifts: the single invocations' median
// stays with the many, and the result line says so.
func TestSingleMedian(t *testing.T) {
	k := kernelTimes{batch: 4}
	var recs []Ran
	for _, d := range []uint64{700, 700, 700, 1500, 740, 700, 760, 700} {
		recs = append(recs, Ran{Kind: "memset", Name: "Memset", DurNS: d})
	}
	if err := k.add(recs, 2); err != nil {
		t.Fatal(err)
	}
	if want := []float64{900, 725}; !slices.Equal(k.values, want) {
		t.Errorf("batch means %v, want %v", k.values, want)
	}
	if got := median(k.single, 0.95); got != 700 {
		t.Errorf("single median %g, want 700", got)
	}
	for _, tc := range []struct {
		single, kernel, all float64
		want                string
	}{
		{740, 900, 0, "single invocations' median 0.74µs"},
		{880, 900, 0, ""},
		{0, 900, 0, ""},
		{740, 0, 0, ""},
		// Held against the median of all batches, as the singles are.
		{740, 745, 900, "single invocations' median 0.74µs"},
		{740, 900, 745, ""},
	} {
		r := &Result{SingleMedianNS: tc.single, KernelMedianNS: tc.kernel, KernelMedianAllNS: tc.all}
		if got := r.singleNote(); got != tc.want {
			t.Errorf("single %g, kernel %g, all %g: note %q, want %q", tc.single, tc.kernel, tc.all, got, tc.want)
		}
	}
}

// TestReportSingles: a streamed kernel (a memset) reports the median of its
// single invocations, not of its batch means, which a tail of slow
// invocations lifts; the note then names the batch means' median.
func TestReportSingles(t *testing.T) {
	for _, tc := range []struct {
		name      string
		single    []float64
		wantMed   float64
		converged bool
	}{
		{"tail", append(slices.Repeat([]float64{768}, 90), slices.Repeat([]float64{1800}, 10)...), 768, true},
		{"even count", []float64{700, 800}, 750, false},
		{"none", nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{KernelMedianNS: 871, KernelMedianAllNS: 871}
			reportSingles(r, tc.single, 0.95, 0.01)
			if tc.single == nil {
				if r.ReportsSingles || r.KernelMedianNS != 871 {
					t.Fatalf("no singles changed the result: %+v", r)
				}
				return
			}
			if !r.ReportsSingles || r.KernelMedianNS != tc.wantMed || r.SingleMedianNS != tc.wantMed {
				t.Fatalf("kernel %g, single %g, reports singles %v; want %g", r.KernelMedianNS, r.SingleMedianNS, r.ReportsSingles, tc.wantMed)
			}
			if r.KernelLoNS > r.KernelMedianNS || r.KernelHiNS < r.KernelMedianNS || r.Converged != tc.converged {
				t.Errorf("interval [%g, %g] around %g, converged %v (want %v)", r.KernelLoNS, r.KernelHiNS, r.KernelMedianNS, r.Converged, tc.converged)
			}
			if tc.name == "tail" {
				if want := "single invocations' median (batch means' 0.87µs)"; r.singleNote() != want {
					t.Errorf("note %q, want %q", r.singleNote(), want)
				}
			}
		})
	}
}
