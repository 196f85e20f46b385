package predict

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/signatures"
)

// near reports whether got is within rel of want.
func near(got, want, rel float64) bool {
	if want == 0 {
		return math.Abs(got) <= rel
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

func report(t *testing.T, set *signatures.Set, o synth, opt ReportOptions) *WorkloadPrediction {
	t.Helper()
	p, err := Report([]Input{input("synthetic.bench", o.output(set))}, []*signatures.Set{set}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Workloads) != 1 {
		t.Fatalf("%d workloads predicted, want 1 (no set: %v, warnings %v)", len(p.Workloads), p.NoSet, p.Warnings)
	}
	return p.Workloads[0]
}

// With SYNTHETIC replay times equal to the traced medians, the prediction
// is the sum over all signatures of median x count: the parts' time comes
// in through their parents' per-call time, never on its own.
func TestReportSumsSyntheticExact(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(testing.TB) *signatures.Set
	}{{"prefill", prefillSet}, {"generate", generateSet}} {
		t.Run(tc.name, func(t *testing.T) {
			set := tc.set(t)
			wp := report(t, set, synth{runs: 1, procs: 2}, ReportOptions{})
			var want, traced float64
			parts := 0
			for _, s := range set.Signatures {
				want += float64(s.TracedNS.Median) * float64(s.Count)
				traced += float64(s.TracedNS.Total)
				if s.PartOf != "" {
					parts++
				}
			}
			if !near(wp.PredictedNS.Center, want, 1e-6) {
				t.Errorf("predicted %.0f ns, want sum(median x count) = %.0f", wp.PredictedNS.Center, want)
			}
			if wp.Parts != parts || wp.Measured != len(set.Signatures)-parts || wp.Missing != 0 {
				t.Errorf("parts %d measured %d missing %d, want %d, %d, 0", wp.Parts, wp.Measured, wp.Missing, parts, len(set.Signatures)-parts)
			}
			if float64(wp.TracedNS) != traced || wp.CoveredNS != wp.TracedNS || wp.Coverage != 1 {
				t.Errorf("traced %d covered %d coverage %g, want %0.f, all, 1", wp.TracedNS, wp.CoveredNS, wp.Coverage, traced)
			}
			// One run: the bounds are the run itself.
			if wp.PredictedNS.Lo != wp.PredictedNS.Center || wp.PredictedNS.Hi != wp.PredictedNS.Center || wp.RangeOnly != wp.Measured {
				t.Errorf("one run: bounds %+v, range-only %d", wp.PredictedNS, wp.RangeOnly)
			}
			var busy int64
			for _, d := range set.Summary {
				busy += d.BusyNS
			}
			if wp.BusyNS != busy || wp.ErrBusy == nil || !near(*wp.ErrBusy, want/float64(busy)-1, 1e-6) {
				t.Errorf("busy %d err %v, want %d and %g", wp.BusyNS, wp.ErrBusy, busy, want/float64(busy)-1)
			}
			// Medians are not means: the error against the covered traced
			// time is small but not zero.
			if wp.ErrCovered == nil || math.Abs(*wp.ErrCovered) > 0.5 {
				t.Errorf("error against the traced time %v", wp.ErrCovered)
			}
			if wp.Model != nil || wp.PredictedJ != nil || wp.ErrModel != nil {
				t.Errorf("no model or energy in the output, got %+v %+v", wp.Model, wp.PredictedJ)
			}
		})
	}
}

// The interval of the total is the sum of the signatures' bounds times
// their counts: with six SYNTHETIC runs each bound is the runs' min or max.
func TestReportCIPropagation(t *testing.T) {
	set := prefillSet(t)
	factor := func(s *signatures.Signature) float64 {
		if s.Tier == signatures.TierLibrary {
			return 0.9
		}
		return 1.2
	}
	o := synth{runs: 6, jitter: jitter6, factor: factor}
	wp := report(t, set, o, ReportOptions{})
	var center, lo, hi float64
	for _, s := range set.Signatures {
		if s.PartOf != "" {
			continue
		}
		var v []float64
		for r := range 6 {
			v = append(v, o.synthNS(set, s, r))
		}
		slices.Sort(v)
		n := float64(s.Count)
		center += n * (v[2] + v[3]) / 2
		lo += n * v[0]
		hi += n * v[5]
	}
	if !near(wp.PredictedNS.Center, center, 1e-7) || !near(wp.PredictedNS.Lo, lo, 1e-7) || !near(wp.PredictedNS.Hi, hi, 1e-7) {
		t.Errorf("predicted %+v, want center %.1f lo %.1f hi %.1f", wp.PredictedNS, center, lo, hi)
	}
	if wp.RangeOnly != 0 || wp.Runs != 6 {
		t.Errorf("range-only %d runs %d, want 0 and 6", wp.RangeOnly, wp.Runs)
	}
	for _, s := range wp.Sigs {
		if s.ReplayNS.Range || s.ReplayNS.Runs != 6 || s.PredictedNS.Lo > s.PredictedNS.Center || s.PredictedNS.Hi < s.PredictedNS.Center {
			t.Errorf("%s: %+v", s.ID, s.ReplayNS)
		}
		want := 0.9
		if s.Tier != signatures.TierLibrary {
			want = 1.2
		}
		// The median of the jitter is +0.005.
		if !near(s.Ratio, want*1.005, 1e-7) {
			t.Errorf("%s: ratio %g, want %g", s.ID, s.Ratio, want*1.005)
		}
	}
	// Tiers and classes partition the total.
	for _, list := range [][]GroupPrediction{wp.Tiers, wp.Classes} {
		var sum Interval
		for _, g := range list {
			sum.add(g.PredictedNS)
		}
		if !near(sum.Center, center, 1e-7) || !near(sum.Lo, lo, 1e-7) || !near(sum.Hi, hi, 1e-7) {
			t.Errorf("groups sum to %+v, want the total", sum)
		}
	}
	for _, g := range wp.Tiers {
		want := 1.2 * 1.005
		if g.Tier == signatures.TierLibrary {
			want = 0.9 * 1.005
		}
		// Per-call medians times counts are not totals: only roughly.
		if math.Abs(g.Ratio/want-1) > 0.25 {
			t.Errorf("tier %d ratio %g, want about %g", g.Tier, g.Ratio, want)
		}
	}
}

// Three SYNTHETIC runs are too few for a 95% interval: the bounds are the
// runs' range and are flagged.
func TestReportTooFewRuns(t *testing.T) {
	set := prefillSet(t)
	wp := report(t, set, synth{runs: 3, jitter: []float64{0, 0.1, -0.1}}, ReportOptions{})
	if wp.RangeOnly != wp.Measured || wp.Measured == 0 {
		t.Fatalf("range-only %d of %d", wp.RangeOnly, wp.Measured)
	}
	for _, s := range wp.Sigs {
		if !s.ReplayNS.Range || !near(s.ReplayNS.Lo, 0.9*s.ReplayNS.Center, 1e-7) || !near(s.ReplayNS.Hi, 1.1*s.ReplayNS.Center, 1e-7) {
			t.Errorf("%s: %+v, want the range [0.9, 1.1] x center", s.ID, s.ReplayNS)
		}
	}
	var text bytes.Buffer
	if err := (&Prediction{Confidence: 0.95, Workloads: []*WorkloadPrediction{wp}}).WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "with < 6 runs, their range") {
		t.Errorf("text does not say the bounds are ranges:\n%s", text.String())
	}
}

// Signatures without results are missing with their traced share and the
// skip reason go test -v printed; the coverage is what is left.
func TestReportMissingSignatures(t *testing.T) {
	set := generateSet(t)
	skipped := func(s *signatures.Signature) bool {
		return s.Class == signatures.ClassNorm || s.Class == signatures.ClassCat
	}
	const reason = "signature 0 (x): prepare: no replay for this signature yet"
	wp := report(t, set, synth{runs: 1, skip: skipped, skipLog: reason}, ReportOptions{})
	var want []string
	var share float64
	var traced int64
	for _, s := range set.Signatures {
		traced += s.TracedNS.Total
	}
	for _, s := range set.Signatures {
		if skipped(s) && s.PartOf == "" {
			want = append(want, s.ID)
			share += float64(s.TracedNS.Total) / float64(traced)
		}
	}
	var got []string
	var gotShare float64
	for i, m := range wp.MissingSigs {
		got = append(got, m.ID)
		gotShare += m.Share
		if m.Reason != "skip: "+reason {
			t.Errorf("%s: reason %q", m.ID, m.Reason)
		}
		if i > 0 && m.TracedNS > wp.MissingSigs[i-1].TracedNS {
			t.Errorf("missing signatures not sorted by traced time")
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || wp.Missing != len(want) {
		t.Fatalf("missing %v, want %v", got, want)
	}
	if !near(gotShare, share, 1e-7) || !near(wp.Coverage, 1-share, 1e-7) {
		t.Errorf("missing share %g coverage %g, want %g and %g", gotShare, wp.Coverage, share, 1-share)
	}
	for _, c := range wp.Classes {
		if (c.Class == signatures.ClassNorm || c.Class == signatures.ClassCat) && (c.Measured != 0 || c.PredictedNS.Center != 0 || c.Ratio != 0) {
			t.Errorf("class %s: %+v, want nothing measured", c.Class, c)
		}
	}
}

// The skip reason is found whether go test prints the log before the
// "--- SKIP" line (chatty benchmarks) or after it, with or without a
// GOMAXPROCS suffix on the name.
func TestSkipReasons(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"before", "BenchmarkReplay/workload=w/sig=a-8\n    replay_test.go:79: part of b\n--- SKIP: BenchmarkReplay/workload=w/sig=a\n", "skip: part of b"},
		{"after", "--- SKIP: BenchmarkReplay/workload=w/sig=a\n    replay_test.go:79: part of b\n", "skip: part of b"},
		{"fail", "BenchmarkReplay/workload=w/sig=a\n    x.go:1: boom\n--- FAIL: BenchmarkReplay/workload=w/sig=a\n", "fail: boom"},
		{"no log", "--- SKIP: BenchmarkReplay/workload=w/sig=a\nBenchmarkReplay/workload=w/sig=b\n", "skip"},
		{"other benchmark's log", "BenchmarkReplay/workload=w/sig=c\n    x.go:1: not mine\n--- SKIP: BenchmarkReplay/workload=w/sig=a\n", "skip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := skips([]byte(tc.text))
			if len(got) != 1 || got[0] != (skip{"w", "a", tc.want}) {
				t.Errorf("skips = %+v, want reason %q", got, tc.want)
			}
		})
	}
}

// A result for a signature that is part of another is not counted: its
// time is inside its parent's replay.
func TestReportPartOfExcluded(t *testing.T) {
	set := prefillSet(t)
	base := report(t, set, synth{runs: 1}, ReportOptions{})
	p, err := Report([]Input{input("parts.bench", synth{runs: 1, parts: true}.output(set))}, []*signatures.Set{set}, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wp := p.Workloads[0]
	if wp.PredictedNS != base.PredictedNS || wp.Measured != base.Measured || wp.Parts == 0 {
		t.Errorf("with the parts' results: %+v, %d measured; without: %+v, %d", wp.PredictedNS, wp.Measured, base.PredictedNS, base.Measured)
	}
	n := 0
	for _, w := range p.Warnings {
		if strings.Contains(w, "is part of") {
			n++
		}
	}
	if n != wp.Parts {
		t.Errorf("%d warnings about parts' results, want %d: %v", n, wp.Parts, p.Warnings)
	}
	// The parent's traced time includes its parts'.
	for _, s := range set.Signatures {
		if s.PartOf == "" {
			continue
		}
		parent := set.ByID(s.PartOf)
		for _, sp := range wp.Sigs {
			if sp.ID == parent.ID && sp.TracedNS < parent.TracedNS.Total+s.TracedNS.Total {
				t.Errorf("%s: traced %d, want its own %d plus part %s's %d", sp.ID, sp.TracedNS, parent.TracedNS.Total, s.ID, s.TracedNS.Total)
			}
		}
	}
}

// Energy: sum(J/op x count) of the SYNTHETIC J/op, the idle-gap term
// idle-W x (model wall - trace busy) with the REAL model wall time and
// energy of measured.json, and the errors against the model.
func TestReportModelAndEnergy(t *testing.T) {
	set := prefillSet(t)
	m := measuredRun(t, "bloom-560m_prefill")
	const idleW = 70.0                                                                             // synthetic
	joules := func(s *signatures.Signature) float64 { return 300e-9 * float64(s.TracedNS.Median) } // 300 W while busy (synthetic)
	o := synth{runs: 6, jitter: jitter6, joules: joules, modelNS: m.WallS * 1e9, modelJ: m.EnergyJ, idleW: idleW}
	wp := report(t, set, o, ReportOptions{})
	if wp.Model == nil || wp.Model.J == nil || wp.Model.IdleW == nil {
		t.Fatalf("model %+v", wp.Model)
	}
	if !near(wp.Model.WallNS.Center, m.WallS*1e9, 1e-6) || !near(wp.Model.J.Center, m.EnergyJ, 1e-7) || wp.Model.WallNS.Runs != 6 {
		t.Errorf("model %+v, want wall %g s energy %g J", wp.Model, m.WallS, m.EnergyJ)
	}
	if wp.ErrModel == nil || !near(*wp.ErrModel, wp.PredictedNS.Center/(m.WallS*1e9)-1, 1e-7) {
		t.Errorf("error against the model %v", wp.ErrModel)
	}
	var kernelJ float64
	for _, s := range set.Signatures {
		if s.PartOf == "" {
			kernelJ += joules(s) * float64(s.Count)
		}
	}
	if wp.PredictedJ == nil || !near(wp.PredictedJ.Center, kernelJ, 1e-7) || wp.EnergySignatures != wp.Measured || !near(wp.EnergyCoverage, 1, 1e-12) {
		t.Fatalf("predicted energy %+v of %d signatures, coverage %g; want %g J", wp.PredictedJ, wp.EnergySignatures, wp.EnergyCoverage, kernelJ)
	}
	idle := idleW * (m.WallS - float64(wp.BusyNS)/1e9)
	if wp.IdleJ == nil || !near(*wp.IdleJ, idle, 1e-7) {
		t.Errorf("idle energy %v, want %g", wp.IdleJ, idle)
	}
	traceIdle := idleW * float64(wp.TraceWallNS-wp.BusyNS) / 1e9
	if wp.TraceIdleJ == nil || !near(*wp.TraceIdleJ, traceIdle, 1e-7) || wp.TraceWallNS <= wp.BusyNS {
		t.Errorf("idle energy from the trace %v, want %g", wp.TraceIdleJ, traceIdle)
	}
	if wp.TotalJ == nil || !near(wp.TotalJ.Center, kernelJ+idle, 1e-7) {
		t.Errorf("total energy %+v, want %g", wp.TotalJ, kernelJ+idle)
	}
	if wp.ErrEnergy == nil || !near(*wp.ErrEnergy, (kernelJ+idle)/m.EnergyJ-1, 1e-7) {
		t.Errorf("energy error %v", wp.ErrEnergy)
	}
	var text bytes.Buffer
	if err := (&Prediction{Confidence: 0.95, Workloads: []*WorkloadPrediction{wp}}).WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"model wall time", "predicted kernel energy", "idle-gap energy", "the model run's idle power", "from the trace alone", "model energy", "prediction "} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

// A model run with its spread: ns/op is the median inference, which the
// prediction is compared with, and mean-ns the mean wall time, which the
// idle gaps' energy takes.
func TestReportModelMedianAndMean(t *testing.T) {
	set := prefillSet(t)
	m := measuredRun(t, "bloom-560m_prefill")
	const idleW = 70.0 // synthetic
	median, mean := 0.96*m.WallS*1e9, m.WallS*1e9
	o := synth{runs: 6, jitter: jitter6, modelNS: median, modelMeanNS: mean, modelJ: m.EnergyJ, idleW: idleW,
		joules: func(s *signatures.Signature) float64 { return 300e-9 * float64(s.TracedNS.Median) }}
	wp := report(t, set, o, ReportOptions{})
	if wp.Model == nil || wp.Model.MeanWallNS == nil {
		t.Fatalf("model %+v", wp.Model)
	}
	if !near(wp.Model.WallNS.Center, median, 1e-6) || !near(wp.Model.MeanWallNS.Center, mean, 1e-6) || !near(wp.Model.EnergyWallNS(), mean, 1e-6) {
		t.Errorf("model wall %g, mean %g; want %g and %g", wp.Model.WallNS.Center, wp.Model.MeanWallNS.Center, median, mean)
	}
	if wp.ErrModel == nil || !near(*wp.ErrModel, wp.PredictedNS.Center/median-1, 1e-7) {
		t.Errorf("error against the model %v, want against the median", wp.ErrModel)
	}
	if idle := idleW * (mean - float64(wp.BusyNS)) / 1e9; wp.IdleJ == nil || !near(*wp.IdleJ, idle, 1e-7) {
		t.Errorf("idle energy %v, want %g (over the mean wall time)", wp.IdleJ, idle)
	}
	var text bytes.Buffer
	if err := (&Prediction{Confidence: 0.95, Workloads: []*WorkloadPrediction{wp}}).WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "the median inference (mean ") {
		t.Errorf("text does not say the model wall time is the median:\n%s", text.String())
	}
}

// Runs split over several files, workloads with no set and sets with no
// results, top lists, and the text and JSON outputs.
func TestReportSeveralFilesAndWorkloads(t *testing.T) {
	pre, gen := prefillSet(t), generateSet(t)
	o := synth{runs: 6, jitter: jitter6}
	one, err := Report([]Input{input("a", o.output(pre))}, []*signatures.Set{pre}, ReportOptions{Top: 5})
	if err != nil {
		t.Fatal(err)
	}
	// The same runs, three in each of two files, plus a workload without
	// a set and a benchmark that is not kreplay's.
	first, second := o, o
	first.runs, second.jitter = 3, jitter6[3:]
	second.runs = 3
	in := []Input{
		input("a1", first.output(pre)),
		input("a2", second.output(pre)+"BenchmarkOther-8\t100\t5 ns/op\n"),
		input("b", o.output(gen)),
	}
	two, err := Report(in, []*signatures.Set{pre}, ReportOptions{Top: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(two.Workloads) != 1 || two.Workloads[0].PredictedNS != one.Workloads[0].PredictedNS {
		t.Fatalf("split over files: %+v, want %+v", two.Workloads[0].PredictedNS, one.Workloads[0].PredictedNS)
	}
	if !slices.Equal(two.NoSet, []string{bench.Workload(gen.Source)}) {
		t.Errorf("no set: %v", two.NoSet)
	}
	if !slices.ContainsFunc(two.Warnings, func(s string) bool { return strings.Contains(s, "BenchmarkOther") }) {
		t.Errorf("no warning for the foreign benchmark: %v", two.Warnings)
	}
	wp := two.Workloads[0]
	if len(wp.Top) != 5 {
		t.Fatalf("top %d", len(wp.Top))
	}
	for i := 1; i < len(wp.Top); i++ {
		if wp.Top[i].PredictedNS.Center > wp.Top[i-1].PredictedNS.Center {
			t.Errorf("top not sorted by predicted time")
		}
	}
	p, err := Report([]Input{input("a", o.output(pre))}, []*signatures.Set{pre, gen}, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.NoResults, []string{bench.Workload(gen.Source)}) {
		t.Errorf("no results: %v", p.NoResults)
	}

	var text bytes.Buffer
	if err := two.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"workload bloom-560m_prefill", "predicted GPU time", "trace GPU busy", "top 5 signatures",
		"no signature set for workloads bloom-560m_generate", "tier  ", "gemm"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	js, err := json.Marshal(two)
	if err != nil {
		t.Fatal(err)
	}
	var back Prediction
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if back.Workloads[0].PredictedNS != wp.PredictedNS || len(back.Workloads[0].Sigs) != len(wp.Sigs) {
		t.Errorf("JSON round trip changed the prediction")
	}
}

func TestReportTwoSetsOneWorkload(t *testing.T) {
	pre := prefillSet(t)
	other := *pre
	_, err := Report(nil, []*signatures.Set{pre, &other}, ReportOptions{})
	if err == nil || !strings.Contains(err.Error(), "two signature sets") {
		t.Errorf("err = %v", err)
	}
}

func TestWritePlots(t *testing.T) {
	set := prefillSet(t)
	m := measuredRun(t, "bloom-560m_prefill")
	in := []Input{input("a", synth{runs: 6, jitter: jitter6, modelNS: m.WallS * 1e9, skip: func(s *signatures.Signature) bool { return s.Class == signatures.ClassFill }}.output(set))}
	p, err := Report(in, []*signatures.Set{set}, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := p.WritePlots(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"bloom-560m_prefill-classes.png", "bloom-560m_prefill-classes.svg", "bloom-560m_prefill-signatures.png", "bloom-560m_prefill-signatures.svg"}
	var got []string
	for _, f := range files {
		got = append(got, filepath.Base(f))
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Ext(f) {
		case ".png":
			if !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
				t.Errorf("%s is not a PNG", f)
			}
		case ".svg":
			if !bytes.Contains(data[:min(len(data), 512)], []byte("<svg")) || !bytes.Contains(data, []byte("gemm")) && strings.Contains(f, "classes") {
				t.Errorf("%s is not the SVG plot", f)
			}
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("plots %v, want %v", got, want)
	}
}

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []float64
		want   Summary
	}{
		{"none", nil, Summary{}},
		{"one", []float64{5}, Summary{Interval{5, 5, 5}, 1, true}},
		{"five", []float64{5, 1, 4, 2, 3}, Summary{Interval{3, 1, 5}, 5, true}},
		{"six", []float64{6, 1, 5, 2, 4, 3}, Summary{Interval{3.5, 1, 6}, 6, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.values)
			if got := Summarize(tc.values, 0.95); got != tc.want {
				t.Errorf("Summarize(%v) = %+v, want %+v", tc.values, got, tc.want)
			}
			if !slices.Equal(in, tc.values) {
				t.Errorf("Summarize changed its input")
			}
		})
	}
}

// A workload with only a model benchmark has nothing predicted and no
// errors against the references.
func TestReportModelOnly(t *testing.T) {
	set := prefillSet(t)
	o := synth{runs: 2, modelNS: 16e6, skip: func(*signatures.Signature) bool { return true }}
	wp := report(t, set, o, ReportOptions{})
	if wp.Measured != 0 || wp.Model == nil || wp.ErrBusy != nil || wp.ErrCovered != nil || wp.ErrModel != nil || wp.Missing != wp.Signatures-wp.Parts {
		t.Errorf("model only: measured %d model %+v errors %v %v %v missing %d", wp.Measured, wp.Model, wp.ErrBusy, wp.ErrCovered, wp.ErrModel, wp.Missing)
	}
}

// A BenchmarkTimeline line is read like the model's, and the report shows
// the timeline's time against the predicted sum and the trace's busy time.
func TestReportTimeline(t *testing.T) {
	set := prefillSet(t)
	w := bench.Workload(set.Source)
	out := synth{runs: 6, jitter: jitter6}.output(set)
	// Six runs of the timeline benchmark, as go test prints them.
	tlNS := []float64{9.0e6, 9.1e6, 9.2e6, 9.3e6, 9.4e6, 9.5e6}
	for _, ns := range tlNS {
		out += fmt.Sprintf("Benchmark%s/%s-16\t1\t%.0f ns/op\t12345 %s\n", bench.TimelineName, bench.TimelineBenchName(w), ns, bench.UnitSkippedNS)
	}
	p, err := Report([]Input{input("timeline.bench", out)}, []*signatures.Set{set}, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Workloads) != 1 {
		t.Fatalf("%d workloads", len(p.Workloads))
	}
	for _, warn := range p.Warnings {
		if strings.Contains(warn, "Timeline") {
			t.Errorf("warning %s", warn)
		}
	}
	wp := p.Workloads[0]
	tl := wp.Timeline
	if tl == nil {
		t.Fatal("no timeline in the prediction")
	}
	if tl.NS.Runs != 6 || !near(tl.NS.Center, 9.25e6, 1e-9) || tl.NS.Lo > tl.NS.Center || tl.NS.Hi < tl.NS.Center || tl.SkippedNS != 12345 {
		t.Errorf("timeline %+v", tl)
	}
	if tl.ErrPredicted == nil || !near(*tl.ErrPredicted, tl.NS.Center/wp.PredictedNS.Center-1, 1e-9) {
		t.Errorf("error against the prediction %v", tl.ErrPredicted)
	}
	if tl.ErrBusy == nil || !near(*tl.ErrBusy, tl.NS.Center/float64(wp.BusyNS)-1, 1e-9) {
		t.Errorf("error against the busy time %v", tl.ErrBusy)
	}
	var text bytes.Buffer
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"timeline replay", "vs predicted", "vs busy", "traced skipped", "predicted GPU time", "trace GPU busy"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	// No timeline line: no timeline in the prediction or the text.
	wp = report(t, set, synth{runs: 1}, ReportOptions{})
	if wp.Timeline != nil {
		t.Errorf("timeline %+v without a timeline line", wp.Timeline)
	}
}

// A predicted energy above the power limit times the model's wall time
// is bounded by it, and says so; one under it stands.
func TestReportPowerLimitBound(t *testing.T) {
	set := prefillSet(t)
	m := measuredRun(t, "bloom-560m_prefill")
	// SYNTHETIC: 2 kW while busy, far over a 700 W limit.
	joules := func(s *signatures.Signature) float64 { return 2000e-9 * float64(s.TracedNS.Median) }
	out := synth{runs: 1, joules: joules, modelNS: m.WallS * 1e9, modelJ: m.EnergyJ, idleW: 70}.output(set)
	for _, tt := range []struct {
		limit   string
		bounded bool
	}{{"power-limit: 700W\n", true}, {"power-limit: 70000W\n", false}, {"", false}} {
		p, err := Report([]Input{input("synthetic.bench", tt.limit+out)}, []*signatures.Set{set}, ReportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wp := p.Workloads[0]
		capJ := 700 * m.WallS
		switch {
		case tt.bounded && (wp.CapJ == nil || !near(*wp.CapJ, capJ, 1e-9) || !near(wp.TotalJ.Center, capJ, 1e-9)):
			t.Errorf("%q: total %+v, cap %v; want both %g J", tt.limit, wp.TotalJ, wp.CapJ, capJ)
		case !tt.bounded && (wp.CapJ != nil || wp.TotalJ.Center <= capJ):
			t.Errorf("%q: bounded (%v) to %+v", tt.limit, wp.CapJ, wp.TotalJ)
		}
		var text bytes.Buffer
		if err := p.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(text.String(), "bounded by the power limit"); got != tt.bounded {
			t.Errorf("%q: text says bounded %v:\n%s", tt.limit, got, text.String())
		}
	}
}

// A timeline benchmark with a gap and J/op gives the timeline energy and
// its error against the model's.
func TestReportTimelineEnergy(t *testing.T) {
	set := prefillSet(t)
	w := bench.Workload(set.Source)
	// SYNTHETIC: one run of every signature, a model run of 20 ms and 10 J,
	// and a timeline of 9 ms with a 5 ms gap at 10.5 J.
	out := synth{runs: 1, joules: func(s *signatures.Signature) float64 { return 1e-9 * float64(s.TracedNS.Median) },
		modelNS: 20e6, modelJ: 10, idleW: 100}.output(set)
	out += fmt.Sprintf("Benchmark%s/%s-16\t1\t9000000 ns/op\t0 %s\t5000000 %s\t10.5 J/op\t750 W\n",
		bench.TimelineName, bench.TimelineBenchName(w), bench.UnitSkippedNS, bench.UnitGapNS)
	p, err := Report([]Input{input("timeline.bench", out)}, []*signatures.Set{set}, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tl := p.Workloads[0].Timeline
	if tl == nil || tl.J == nil || tl.J.Center != 10.5 || tl.GapNS != 5e6 || tl.ErrEnergy == nil || !near(*tl.ErrEnergy, 0.05, 1e-12) {
		t.Fatalf("timeline %+v", tl)
	}
	var text bytes.Buffer
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "timeline energy") || !strings.Contains(text.String(), "idle 5.000ms after each") {
		t.Errorf("text:\n%s", text.String())
	}
}

// A timeline benchmark with the graph's CUPTI split gives its busy time
// against the trace's and its gaps, in the JSON and a line of the text;
// without the split there is neither.
func TestReportTimelineGraph(t *testing.T) {
	set := prefillSet(t)
	w := bench.Workload(set.Source)
	var busy float64
	for _, d := range set.Summary {
		busy += float64(d.BusyNS)
	}
	// SYNTHETIC: one run of every signature, and two timeline runs whose
	// graph was busy 1.02 x the trace's busy time, with 400 gaps of 1.5 µs.
	base := synth{runs: 1}.output(set)
	line := func(ns, busyNS float64) string {
		return fmt.Sprintf("Benchmark%s/%s-16\t1\t%.0f ns/op\t0 %s\t%.0f %s\t600000 %s\t400 %s\t1500 %s\n",
			bench.TimelineName, bench.TimelineBenchName(w), ns, bench.UnitSkippedNS, busyNS, bench.UnitGraphBusyNS,
			bench.UnitGraphGapNS, bench.UnitGraphGaps, bench.UnitGraphGapMedianNS)
	}
	for _, tc := range []struct {
		name  string
		lines string
		want  bool
	}{
		{"with the split", line(1.02*busy+6e5, 1.02*busy) + line(1.02*busy+6e5, 1.02*busy), true},
		{"without", fmt.Sprintf("Benchmark%s/%s-16\t1\t%.0f ns/op\t0 %s\n", bench.TimelineName, bench.TimelineBenchName(w), busy, bench.UnitSkippedNS), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Report([]Input{input("timeline.bench", base+tc.lines)}, []*signatures.Set{set}, ReportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			g := p.Workloads[0].Timeline.Graph
			var text bytes.Buffer
			if err := p.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			has := strings.Contains(text.String(), "in the graph")
			if !tc.want {
				if g != nil || has {
					t.Errorf("graph %+v, text has it %v", g, has)
				}
				return
			}
			if g == nil || g.ErrBusy == nil || !near(*g.ErrBusy, 0.02, 1e-5) || g.GapNS != 6e5 || g.Gaps != 400 || g.MedianGapNS != 1500 {
				t.Fatalf("graph %+v", g)
			}
			if !has || !strings.Contains(text.String(), "+2.0% vs busy; 400 gaps between them, 600.00µs in all (median 1.50µs)") {
				t.Errorf("text:\n%s", text.String())
			}
		})
	}
}
