package bench

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/energy"
	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/internal/runner"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier3"
)

// fakeB records what a benchmark body does. Like the real ones, its
// Skip and Fatal methods end the goroutine, so it runs on its own.
type fakeB struct {
	testing.TB
	name                 string
	skipped, fatal, errd string
	logs                 []string
	metrics              map[string]float64
}

func (f *fakeB) Helper()      {}
func (f *fakeB) Name() string { return f.name }
func (f *fakeB) Skipf(format string, args ...any) {
	f.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fakeB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fakeB) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }
func (f *fakeB) Error(args ...any) { f.errd = fmt.Sprint(args...) }
func (f *fakeB) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeB) ReportMetric(n float64, unit string) { f.metrics[unit] = n }

// fakeReplayer returns a canned result or error and counts its calls.
type fakeReplayer struct {
	res   *replay.Result
	err   error
	calls int
	opt   Options
}

func (r *fakeReplayer) Replay(sig *signatures.Signature, o Options) (*replay.Result, error) {
	r.calls++
	r.opt = o
	if r.err != nil {
		return nil, r.err
	}
	res := *r.res
	res.ID = sig.ID
	return &res, nil
}

func runFake(name string, n int, set *signatures.Set, id string, open func() (replayer, error)) *fakeB {
	f := &fakeB{name: name, metrics: map[string]float64{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runSignature(f, n, set, id, Options{}, open)
	}()
	<-done
	return f
}

func TestSignatureBenchmark(t *testing.T) {
	set := prefillSet(t)
	var gemm, part, memcpy *signatures.Signature
	for _, s := range set.Signatures {
		switch {
		case s.PartOf != "" && part == nil:
			part = s
		case s.Class == signatures.ClassGEMM && gemm == nil:
			gemm = s
		case s.Class == signatures.ClassMemcpy && memcpy == nil:
			memcpy = s
		}
	}
	unrep := *gemm
	unrep.ID, unrep.Unreplayable = "unreplayable", "unreplayable: no shapes"
	set2 := *set
	set2.Signatures = append(append([]*signatures.Signature(nil), set.Signatures...), &unrep)

	ok := &replay.Result{Stats: replay.Stats{MedianNS: 1200}, KernelMedianNS: 1000, Work: launch.Work{Bytes: 4e6, FLOPs: 8e6},
		Energy: &replay.Energy{JoulesPerOp: 0.25, Watts: 500}, GPU: &energy.Summary{Samples: 3, MeanSMClockMHz: 1755}}
	noGPU := func() (replayer, error) { return nil, errors.New("no driver") }
	with := func(r *fakeReplayer) func() (replayer, error) { return func() (replayer, error) { return r, nil } }

	for _, tc := range []struct {
		name     string
		require  bool
		id       string
		open     func() (replayer, error)
		skipped  string
		fatal    string
		errd     string
		metrics  map[string]float64
		replayed bool
	}{
		{name: "measured", id: gemm.ID, open: with(&fakeReplayer{res: ok}), replayed: true,
			metrics: map[string]float64{"ns/op": 1000, UnitGBps: 4000, UnitTFLOPs: 8, UnitJoules: 0.25, UnitWatts: 500, UnitSMMHz: 1755}},
		{name: "event time without CUPTI", id: memcpy.ID, open: with(&fakeReplayer{res: &replay.Result{Stats: replay.Stats{MedianNS: 2000}, Work: launch.Work{Bytes: 1000}}}), replayed: true,
			metrics: map[string]float64{"ns/op": 2000, UnitGBps: 0.5}},
		{name: "part of another", id: part.ID, open: noGPU, skipped: "part of " + part.PartOf},
		{name: "part of another, GPU required", require: true, id: part.ID, open: noGPU, skipped: "part of " + part.PartOf},
		{name: "unreplayable", require: true, id: unrep.ID, open: noGPU, skipped: "unreplayable: no shapes"},
		{name: "no GPU", id: gemm.ID, open: noGPU, skipped: "GPU not usable"},
		{name: "no GPU, required", require: true, id: gemm.ID, open: noGPU, fatal: "GPU required"},
		{name: "no replay yet", require: true, id: gemm.ID, open: with(&fakeReplayer{err: fmt.Errorf("prepare: %w", replay.ErrNotImplemented)}),
			skipped: "no replay for this signature yet", replayed: true},
		{name: "replay error", id: gemm.ID, open: with(&fakeReplayer{err: errors.New("out of memory")}), skipped: "out of memory", replayed: true},
		{name: "replay error, required", require: true, id: gemm.ID, open: with(&fakeReplayer{err: errors.New("out of memory")}), errd: "out of memory", replayed: true},
		{name: "unknown signature", id: "nope", open: noGPU, fatal: "not in the set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.require {
				t.Setenv(gputest.Env, "1")
			} else {
				t.Setenv(gputest.Env, "")
			}
			var fr *fakeReplayer
			open := func() (replayer, error) {
				r, err := tc.open()
				if r != nil {
					fr = r.(*fakeReplayer)
				}
				return r, err
			}
			f := runFake("Bench/"+tc.name, 1, &set2, tc.id, open)
			for _, c := range []struct{ what, got, want string }{{"skip", f.skipped, tc.skipped}, {"fatal", f.fatal, tc.fatal}, {"error", f.errd, tc.errd}} {
				if (c.want == "") != (c.got == "") || !strings.Contains(c.got, c.want) {
					t.Errorf("%s %q, want %q", c.what, c.got, c.want)
				}
			}
			if (fr != nil && fr.calls > 0) != tc.replayed {
				t.Errorf("replayed %v, want %v", fr != nil && fr.calls > 0, tc.replayed)
			}
			if tc.metrics != nil {
				if len(f.metrics) != len(tc.metrics) {
					t.Errorf("metrics %v, want %v", f.metrics, tc.metrics)
				}
				for unit, want := range tc.metrics {
					if !near(f.metrics[unit], want, 1e-12) {
						t.Errorf("%s = %g, want %g", unit, f.metrics[unit], want)
					}
				}
				if fr.opt.Cache != replay.Context || fr.opt.Measure.Energy {
					t.Errorf("cache %v energy %v, want context and no energy", fr.opt.Cache, fr.opt.Measure.Energy)
				}
			}
		})
	}
}

// A call with b.N > 1 after the first reports the first call's
// measurement instead of measuring again.
func TestSignatureMeasuresOncePerRun(t *testing.T) {
	t.Setenv(gputest.Env, "")
	set := prefillSet(t)
	id := set.Signatures[0].ID
	fr := &fakeReplayer{res: &replay.Result{Stats: replay.Stats{MedianNS: 10}}}
	open := func() (replayer, error) { return fr, nil }
	name := "BenchmarkReplay/" + t.Name()
	for i, n := range []int{1, 100, 1, 5} {
		f := runFake(name, n, set, id, open)
		fr.res = &replay.Result{Stats: replay.Stats{MedianNS: float64(10 * (i + 2))}}
		if f.metrics["ns/op"] == 0 {
			t.Fatalf("call %d: no ns/op", i)
		}
	}
	// Calls with N = 1 measure (the first of each -count run); the
	// others repeat the last measurement.
	if fr.calls != 2 {
		t.Errorf("%d measurements, want 2", fr.calls)
	}
}

func TestOptionsFromEnvironment(t *testing.T) {
	for _, tc := range []struct {
		energy, ticks, cache string
		wantEnergy           bool
		wantTicks            int
		wantCache            replay.CacheMode
		err                  string
	}{
		{"", "", "", false, 0, replay.Context, ""},
		{"1", "", "warm", true, 0, replay.Warm, ""},
		{"1", "21", "", true, 21, replay.Context, ""},
		{"0", "", "rotating", false, 0, replay.Rotating, ""},
		{"maybe", "", "", false, 0, replay.Context, EnvEnergy},
		{"1", "1", "", false, 0, replay.Context, EnvEnergyTicks},
		{"1", "many", "", false, 0, replay.Context, EnvEnergyTicks},
		{"", "", "lukewarm", false, 0, replay.Context, "unknown cache mode"},
	} {
		t.Setenv(EnvEnergy, tc.energy)
		t.Setenv(EnvEnergyTicks, tc.ticks)
		t.Setenv(EnvCache, tc.cache)
		o, err := Options{}.withEnv()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q %q: err = %v, want %q", tc.energy, tc.cache, err, tc.err)
			}
			continue
		}
		if err != nil || o.Measure.Energy != tc.wantEnergy || o.Measure.EnergyTicks != tc.wantTicks || o.Cache != tc.wantCache {
			t.Errorf("%q %q %q: energy %v ticks %d cache %v err %v", tc.energy, tc.ticks, tc.cache, o.Measure.Energy, o.Measure.EnergyTicks, o.Cache, err)
		}
	}
}

func TestLoad(t *testing.T) {
	data := []byte(`{"version": 1, "source": {"file": "x", "workload": "w"}, "timeline_summary": null, "links": {}, "signatures": [], "timeline": {"sig": [], "device": [], "stream": [], "start_ns": [], "dur_ns": []}}`)
	a := Load(t, "x", data)
	if b := Load(t, "x", data); a != b || a.Source.Workload != "w" {
		t.Errorf("Load read the set twice or wrong: %p %p %+v", a, b, a.Source)
	}
	f := &fakeB{metrics: map[string]float64{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Load(f, "bad", []byte(`{"version": 2}`))
	}()
	<-done
	if !strings.Contains(f.fatal, "version 2") {
		t.Errorf("bad set: fatal %q", f.fatal)
	}
}

// KREPLAY_CAUSAL_SCORES switches the causal-scores input heuristic; a bad
// value is an error naming the variable; unset, the options' own value
// stands.
func TestEnvCausalScores(t *testing.T) {
	for _, tc := range []struct {
		env     string
		uniform bool // given
		want    bool // UniformScores after the environment
		err     bool
	}{
		{"0", false, true, false},
		{"yes", true, false, false},
		{"", false, false, false},
		{"", true, true, false},
		{"sometimes", false, false, true},
	} {
		t.Setenv(EnvCausalScores, tc.env)
		o, err := Options{Tier3: tier3.Config{UniformScores: tc.uniform}}.withEnv()
		if (err != nil) != tc.err || err == nil && o.Tier3.UniformScores != tc.want {
			t.Errorf("%s=%q: uniform scores %v, err %v; want %v", EnvCausalScores, tc.env, o.Tier3.UniformScores, err, tc.want)
		}
		if err != nil && !strings.Contains(err.Error(), EnvCausalScores) {
			t.Errorf("error %q does not name %s", err, EnvCausalScores)
		}
	}
}

// A model run's metrics: wall time, energy and power, idle power, and the
// spread of its inferences where the runner measured it.
func TestModelMetrics(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    runner.Result
		want map[string]float64
	}{
		{"wall only", runner.Result{WallSPerInference: 0.01}, map[string]float64{"ns/op": 1e7}},
		// ns/op is then the median span, and the mean moves to mean-ns.
		{"with energy, idle and spread", runner.Result{WallSPerInference: 0.0105, EnergyJPerInference: 5.25, IdleW: 70, SpanMS: []float64{9, 10, 12}},
			map[string]float64{"ns/op": 1e7, UnitMeanNS: 1.05e7, UnitJoules: 5.25, UnitWatts: 500, UnitIdleWatts: 70, UnitSpanP10: 9e6, UnitSpanP90: 12e6}},
		{"a spread not of three", runner.Result{WallSPerInference: 0.01, SpanMS: []float64{10}}, map[string]float64{"ns/op": 1e7}},
		// Processes 108.7 and 118.7 ms apart: 9.2%.
		{"processes", runner.Result{WallSPerInference: 0.01, ProcessesMS: []float64{118.7, 108.7}}, map[string]float64{"ns/op": 1e7, UnitProcSpread: 118.7/108.7 - 1}},
		{"one process", runner.Result{WallSPerInference: 0.01, ProcessesMS: []float64{108.7}}, map[string]float64{"ns/op": 1e7}},
	} {
		got := map[string]float64{}
		for _, v := range ModelMetrics(&tc.r) {
			got[v.Unit] = v.Value
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			continue
		}
		for u, w := range tc.want {
			if !near(got[u], w, 1e-12) {
				t.Errorf("%s: %s = %g, want %g", tc.name, u, got[u], w)
			}
		}
	}
}
