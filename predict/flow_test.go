package predict

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/internal/runner"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// Flow's output reads back as go test -bench output does: every value
// under its signature, the failures as skips with their reason, the
// timeline and model siblings, and a prediction from them. The set is the
// real BLOOM-560M prefill set; the numbers are SYNTHETIC (1.1 x the
// traced median, 1 mJ per microsecond), since Flow itself needs a GPU.
func TestFlowWriteBench(t *testing.T) {
	set := prefillSet(t)
	fr := &FlowResult{Set: set, GPU: "NVIDIA H100 80GB HBM3"}
	var failed string
	var wantNS, wantJ float64
	wantFid := map[string]float64{}
	throttled, unconverged, energyThrottled, discarded, kept := 0, 0, 0, 0, 0
	var throttledJ float64
	for _, s := range set.Signatures {
		e := replay.Entry{ID: s.ID, Label: s.Label, Tier: s.Tier, Class: s.Class, Count: s.Count,
			TracedMedianNS: s.TracedNS.Median, TracedTotalNS: s.TracedNS.Total, PartOf: s.PartOf}
		switch {
		case s.PartOf != "":
		case failed == "" && s.Tier == 3:
			failed = s.ID
			e.Err = "tier 3: shape f16[1,2] too big for the GPU"
		default:
			ns := 1.1 * float64(s.TracedNS.Median)
			fid := map[signatures.Tier]string{1: replay.FidelityMemory, 2: replay.FidelitySame, 3: replay.FidelityOwn}[s.Tier]
			e.Result = &replay.Result{Stats: replay.Stats{MedianNS: ns}, ID: s.ID, Energy: &replay.Energy{JoulesPerOp: ns * 1e-6, Watts: 1000, Throttled: s.Class == signatures.ClassGEMM},
				Fidelity: fid, Path: "p", Converged: s.Tier != 1, Throttled: s.Tier == 2}
			if s.Class == signatures.ClassGEMM {
				energyThrottled++
				throttledJ += ns * 1e-6 * float64(s.Count)
			}
			wantNS += ns * float64(s.Count)
			wantJ += ns * 1e-6 * float64(s.Count)
			wantFid[fid] += ns * float64(s.Count)
			if s.Tier == 2 {
				throttled++
				// Throttled samples: every other signature kept them,
				// the rest discarded them.
				e.Result.Samples, e.Result.ThrottledSamples = 37, 3
				if throttled%2 == 0 {
					e.Result.Samples, e.Result.ThrottledSamples, e.Result.ThrottledKept = 15, 12, true
					kept++
				} else {
					discarded++
				}
			} else if s.Tier == 1 {
				unconverged++
			}
		}
		fr.Entries = append(fr.Entries, e)
	}
	fr.Timeline = &replay.TimelineResult{Stats: replay.Stats{MedianNS: 13.5e6}, SkippedNS: 864}
	fr.Model = &runner.Result{WallSPerInference: 0.0161, EnergyJPerInference: 7.4, IdleW: 130}

	var buf bytes.Buffer
	if err := fr.WriteBench(&buf, "github.com/kreplay/kreplay/bench/bloom_560m_prefill"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"pkg: github.com/kreplay/kreplay/bench/bloom_560m_prefill", "gpu: NVIDIA H100 80GB HBM3",
		"BenchmarkTimeline/workload=bloom-560m_prefill/timeline", "BenchmarkModel/workload=bloom-560m_prefill/model"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	rs, err := ReadResults([]Input{{Name: "flow.bench", Reader: strings.NewReader(out)}})
	if err != nil {
		t.Fatal(err)
	}
	workload := bench.Workload(set.Source)
	w := rs.Workload(workload)
	if w == nil {
		t.Fatalf("no workload %s in %v", workload, rs.WorkloadNames())
	}
	if !strings.Contains(w.Skipped[failed], "too big for the GPU") {
		t.Errorf("skip reason of %s = %q", failed, w.Skipped[failed])
	}
	near := func(got []float64, want float64) bool { return len(got) == 1 && math.Abs(got[0]-want) <= 1e-9*want }
	if w.Timeline == nil || !near(w.Timeline.NS, 13.5e6) || w.Model == nil || !near(w.Model.NS, 16.1e6) ||
		!near(w.Model.Joules, 7.4) || !near(w.Model.IdleW, 130) {
		t.Errorf("siblings did not read back: timeline %+v model %+v", w.Timeline, w.Model)
	}
	p, err := Predict(rs, []*signatures.Set{set}, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wp := p.Workloads[0]
	if math.Abs(wp.PredictedNS.Center-wantNS) > 1e-6*wantNS {
		t.Errorf("predicted %v ns, want %v", wp.PredictedNS.Center, wantNS)
	}
	if wp.PredictedJ == nil || math.Abs(wp.PredictedJ.Center-wantJ) > 1e-6*wantJ {
		t.Errorf("predicted %+v J, want %v", wp.PredictedJ, wantJ)
	}
	if wp.Missing != 1 {
		t.Errorf("%d missing signatures, want 1 (%s)", wp.Missing, failed)
	}
	// The fidelity lines read back: the prediction splits by fidelity,
	// most exact first, and counts the flagged signatures.
	if wp.Throttled != throttled || wp.Unconverged != unconverged || len(wp.ByFidelity) != len(wantFid) {
		t.Errorf("fidelity split %+v, %d throttled, %d unconverged; want %v, %d, %d", wp.ByFidelity, wp.Throttled, wp.Unconverged, wantFid, throttled, unconverged)
	}
	if wp.ThrottledDiscarded != discarded || wp.ThrottledKept != kept || discarded == 0 || kept == 0 {
		t.Errorf("throttled samples discarded in %d signatures, kept in %d; want %d, %d", wp.ThrottledDiscarded, wp.ThrottledKept, discarded, kept)
	}
	if wp.EnergyThrottled != energyThrottled || energyThrottled == 0 || math.Abs(wp.ThrottledJ-throttledJ) > 1e-6*throttledJ {
		t.Errorf("%d signatures with throttled energy windows, %v J; want %d, %v", wp.EnergyThrottled, wp.ThrottledJ, energyThrottled, throttledJ)
	}
	var text strings.Builder
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{fmt.Sprintf("%d signatures: measured at a power- or heat-capped clock", energyThrottled),
		fmt.Sprintf("; %d signatures throttled (throttled samples discarded in %d, kept in %d), %d unconverged", throttled, discarded, kept, unconverged)} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, text.String())
		}
	}
	share := 0.0
	for i, f := range wp.ByFidelity {
		if math.Abs(f.PredictedNS-wantFid[f.Fidelity]) > 1e-6*wantNS || i > 0 && f.Fidelity == replay.FidelitySame {
			t.Errorf("fidelity %d: %+v, want %v ns", i, f, wantFid[f.Fidelity])
		}
		share += f.Share
	}
	if math.Abs(share-1) > 1e-9 {
		t.Errorf("fidelity shares add to %v", share)
	}
}

// A model that did not run is written as bench.NoModelLine, which go test
// prints without -v, and the report says why.
func TestFlowNoModel(t *testing.T) {
	set := prefillSet(t)
	fr := &FlowResult{Set: set, GPU: "g", ModelErr: errors.New("no full-model run for this workload: no workload spec")}
	s := set.Signatures[0]
	fr.Entries = []replay.Entry{{ID: s.ID, Tier: s.Tier, Count: s.Count, Result: &replay.Result{Stats: replay.Stats{MedianNS: 1000}}}}
	var buf bytes.Buffer
	if err := fr.WriteBench(&buf, "p"); err != nil {
		t.Fatal(err)
	}
	want := "kreplay BenchmarkModel/workload=bloom-560m_prefill/model: no model run: no full-model run for this workload: no workload spec\n"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, buf.String())
	}
	p, err := Report([]Input{{Name: "x.bench", Reader: &buf}}, []*signatures.Set{set}, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 0 {
		t.Errorf("warnings %v", p.Warnings)
	}
	wp := p.Workloads[0]
	if wp.Model != nil || wp.NoModel != "no full-model run for this workload: no workload spec" {
		t.Errorf("model %+v, no model %q", wp.Model, wp.NoModel)
	}
	var text strings.Builder
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`\nmodel +not run +no full-model run`).MatchString(text.String()) {
		t.Errorf("report:\n%s", text.String())
	}
}

func TestParseNoModelLine(t *testing.T) {
	for _, tc := range []struct{ line, workload, reason string }{
		{bench.NoModelLine("BenchmarkModel/workload=w-1_prefill/model", "a: b\nc"), "w-1_prefill", "a: b c"},
		{"kreplay BenchmarkModel/workload=w/model-8: no model run: r", "w", "r"},
		{"kreplay: BenchmarkModel/workload=w/model: no model run: r", "", ""},
		{"kreplay BenchmarkReplay/workload=w/sig=a: no model run: r", "", ""},
	} {
		w, r, ok := bench.ParseNoModelLine(tc.line)
		if w != tc.workload || r != tc.reason || ok != (tc.workload != "") {
			t.Errorf("%q: %q %q %v", tc.line, w, r, ok)
		}
	}
}

// The configuration lines of two runs on different GPUs and cuBLAS builds
// tell them apart as benchstat's -col gpu and -col cublas do (benchproc's
// projection), and every result carries the GPU its trace came from.
func TestFlowConfigColumns(t *testing.T) {
	set := prefillSet(t)
	var files bytes.Buffer
	for _, run := range []struct{ gpu, cublas string }{{"NVIDIA H100 80GB HBM3", "13.1.0 (/usr/local/cuda/lib64/libcublas.so.13)"}, {"NVIDIA H200", "13.0.2 (/opt/cublas-13.0/libcublas.so.13)"}} {
		fr := &FlowResult{Set: set, GPU: run.gpu, Config: []replay.ConfigItem{{Key: "gpu", Value: run.gpu}, {Key: "driver", Value: "580.159.04"}, {Key: "cublas", Value: run.cublas}}}
		for _, s := range set.Signatures[:3] {
			fr.Entries = append(fr.Entries, replay.Entry{ID: s.ID, Result: &replay.Result{Stats: replay.Stats{MedianNS: float64(s.TracedNS.Median)}, ID: s.ID}})
		}
		if err := fr.WriteBench(&files, "p"); err != nil {
			t.Fatal(err)
		}
	}
	var parser benchproc.ProjectionParser
	proj, err := parser.Parse("gpu,cublas,trace-gpu", nil)
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]int{}
	r := benchfmt.NewReader(&files, "runs.bench")
	for r.Scan() {
		if res, ok := r.Result().(*benchfmt.Result); ok {
			groups[proj.Project(res).String()]++
		}
	}
	if len(groups) != 2 {
		t.Fatalf("columns %v, want two runs", groups)
	}
	for k, n := range groups {
		if n != 3 || !strings.Contains(k, "trace-gpu:NVIDIA H100 80GB HBM3") || !strings.Contains(k, "cublas:13.") {
			t.Errorf("column %q has %d results", k, n)
		}
	}
}

func TestTimelineGap(t *testing.T) {
	set := &signatures.Set{Summary: []signatures.DeviceSummary{{BusyNS: 9e6}}}
	tests := []struct {
		m    *runner.Result
		want time.Duration
	}{
		{nil, 0},
		{&runner.Result{WallSPerInference: 0.0129}, 3900 * time.Microsecond},
		{&runner.Result{WallSPerInference: 0.008}, 0}, // a wall shorter than busy: no gap
	}
	for _, tt := range tests {
		if got := (&FlowResult{Set: set}).timelineGap(tt.m); got != tt.want {
			t.Errorf("%+v: gap %v, want %v", tt.m, got, tt.want)
		}
	}
}

// Flow replays its signatures in the cache mode it is given, Rotating
// included (the mode once taken for unset and replaced with Context), and
// in replay's default when none is given.
func TestFlowCacheMode(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cache      replay.CacheMode
		wantRuns   replay.CacheMode
		wantString string
	}{
		{"unset", 0, replay.DefaultCacheMode, "context"},
		{"rotating", replay.Rotating, replay.Rotating, "rotating"},
		{"warm", replay.Warm, replay.Warm, "warm"},
		{"cold", replay.Cold, replay.Cold, "cold"},
		{"auto", replay.Auto, replay.Auto, "auto"},
		{"primed", replay.Primed, replay.Primed, "primed"},
		{"context", replay.Context, replay.Context, "context"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			so := FlowOptions{Cache: tc.cache}.suiteOptions(nil)
			if got := so.Cache.Resolve(); got != tc.wantRuns || got.String() != tc.wantString {
				t.Errorf("replays run %v, want %v (%s)", got, tc.wantRuns, tc.wantString)
			}
		})
	}
}

// The GPUs of a prediction spread over several must be of one kind and
// driver; they are named in the progress line.
func TestFlowDevicesSameKind(t *testing.T) {
	h200 := func(i, drv int) *replay.Device {
		return &replay.Device{Index: i, Name: "NVIDIA H200", DriverVersion: drv}
	}
	if err := sameKind([]*replay.Device{h200(0, 13000), h200(1, 13000)}); err != nil {
		t.Errorf("two H200s: %v", err)
	}
	mixed := []*replay.Device{h200(0, 13000), {Index: 1, Name: "NVIDIA H100 80GB HBM3", DriverVersion: 13000}}
	if err := sameKind(mixed); !errors.Is(err, ErrMixedGPUs) || !strings.Contains(err.Error(), "device 1 NVIDIA H100") {
		t.Errorf("an H200 and an H100: %v", err)
	}
	if err := sameKind([]*replay.Device{h200(0, 13000), h200(1, 12080)}); !errors.Is(err, ErrMixedGPUs) {
		t.Errorf("two drivers: %v", err)
	}
	g := &replay.Group{Devices: []*replay.Device{h200(2, 13000), h200(5, 13000)}}
	if got := gpusOf(g); got != "2 x NVIDIA H200 (devices 2,5)" {
		t.Errorf("gpusOf = %q", got)
	}
}
