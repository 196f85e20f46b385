package predict

import (
	"bytes"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/traces"
	"github.com/kreplay/kreplay/internal/traces/tracetest"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/schedule"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/workload"
)

// generateLoaded is the embedded generate's import and schedule, made
// once (each took seconds under -race); the tests only read them.
var generateLoaded struct {
	once sync.Once
	set  *signatures.Set
	rt   *signatures.Runtime
	s    *schedule.Schedule
	err  error
}

// generateInput is the embedded BLOOM-560M generate: its set, its
// runtime calls and the host schedule made from them (the trace's own, a
// guess), with every signature "replayed" at its traced median and 1 µJ
// per µs.
func generateInput(t *testing.T) InferenceInput {
	t.Helper()
	g := &generateLoaded
	g.once.Do(func() {
		const name = "h100_bloom-560m_generate.trace.json.gz"
		if g.set, g.rt, g.err = tracetest.Read(name); g.err == nil {
			g.s, g.err = schedule.FromRuntime(g.rt)
		}
	})
	if g.err != nil {
		t.Fatal(g.err)
	}
	set, rt, s := g.set, g.rt, g.s
	return InferenceInput{Set: set, Runtime: rt, Schedule: s, Entries: medianEntries(set),
		Constants: schedule.Constants{SubmitNS: 4000, QueueGapNS: 1000, WakeNS: 3000, MaxCallNS: DefaultMaxCallNS, WaitPowerW: 100}}
}

// TestPredictInferenceGenerate predicts the embedded generate from its
// trace's host schedule: every GPU op bound, the GPU busy the signatures'
// medians summed over the timeline, the energy the replays' plus the
// waiting power over the idle time, and the figures read back from the
// benchmark output.
func TestPredictInferenceGenerate(t *testing.T) {
	in := generateInput(t)
	inf, err := PredictInference(in)
	if err != nil {
		t.Fatal(err)
	}
	if inf.Ops != len(in.Set.Timeline) || inf.TracedOps != 0 {
		t.Errorf("%d ops (%d traced), want the timeline's %d, none traced", inf.Ops, inf.TracedOps, len(in.Set.Timeline))
	}
	var busy float64
	for _, v := range in.Set.Timeline {
		if sig := in.Set.Signatures[v.Sig]; sig.PartOf == "" {
			busy += float64(sig.TracedNS.Median)
		}
	}
	if math.Abs(inf.BusyNS-busy) > 1 {
		t.Errorf("busy %.0f ns, want the medians' sum %.0f", inf.BusyNS, busy)
	}
	if want := busy * 1e-9; math.Abs(inf.KernelJ-want) > 1e-9 {
		t.Errorf("kernel energy %g J, want %g", inf.KernelJ, want)
	}
	if want := 100 * (inf.WallNS - inf.BusyNS) / 1e9; math.Abs(inf.WaitJ-want) > 1e-9 || inf.EnergyJ != inf.KernelJ+inf.WaitJ {
		t.Errorf("waiting energy %g J (total %g), want %g", inf.WaitJ, inf.EnergyJ, want)
	}
	// A launch-bound decode: the host's gaps, not the GPU, set the wall.
	if inf.Bound != "host" || inf.WallNS < 3*inf.BusyNS || inf.Dominant != "framework" {
		t.Errorf("wall %.4g ms, busy %.4g ms, %s-bound, dominant %s; want host-bound by the framework", inf.WallNS/1e6, inf.BusyNS/1e6, inf.Bound, inf.Dominant)
	}
	t.Logf("%s", inf.Summary())
	if h := inf.HostText(3); !strings.Contains(h, "(framework dominates); by op: ") || strings.Count(h, " ops)") != 3 {
		t.Errorf("host text %q: want the split, the framework dominant, three ops", h)
	}
	// The host twice as fast halves the host's part of a host-bound
	// decode's wall; the GPU's part (busy, under 4% here) stays.
	if len(inf.WhatIfs) != 1 {
		t.Fatalf("what-ifs %+v, want the default one", inf.WhatIfs)
	}
	w := inf.WhatIfs[0]
	if r := w.WallNS / inf.WallNS; r < 0.5 || r > 0.5+inf.BusyNS/inf.WallNS || w.EnergyJ >= inf.EnergyJ {
		t.Errorf("the host twice as fast: wall x%.3f, %.4g J against %.4g J; want x0.5 to x%.3f, less energy",
			r, w.EnergyJ, inf.EnergyJ, 0.5+inf.BusyNS/inf.WallNS)
	}

	fr := &FlowResult{Set: in.Set, GPU: "test GPU", Inference: inf}
	var out bytes.Buffer
	if err := fr.WriteBench(&out, "test"); err != nil {
		t.Fatal(err)
	}
	p, err := Report([]Input{{Name: "x.bench", Reader: &out}}, []*signatures.Set{in.Set}, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ir := p.Workloads[0].Inference
	if ir == nil {
		t.Fatal("no inference read back")
	}
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"wall", ir.WallNS, inf.WallNS}, {"median wall", ir.MedianWallNS, inf.MedianWallNS}, {"busy", ir.BusyNS, inf.BusyNS}, {"GPU idle", ir.GPUIdleNS, inf.GPUIdleNS},
		{"energy", ir.EnergyJ, inf.EnergyJ}, {"kernel energy", ir.KernelJ, inf.KernelJ}, {"waiting energy", ir.WaitJ, inf.WaitJ},
		{"waiting power", ir.WaitW, 100},
	} {
		if math.Abs(c.got-c.want) > 1e-6*math.Abs(c.want) || c.want == 0 {
			t.Errorf("%s read back %g, want %g", c.what, c.got, c.want)
		}
	}
}

// A generate's token figures reach the report with the model's, and each
// is compared.
func TestInferenceReportTokens(t *testing.T) {
	const out = `BenchmarkInference/workload=w/inference-16 1 4.8e+08 ns/op 4e+07 busy-ns 4.4e+08 gpu-idle-ns 0 host-wait-ns 63 J/op 9 kernel-J 54 wait-J 120 wait-W 16 tokens 3e+07 ttft-ns 2.75e+07 tpot-ns 3.9e+07 tpot-p90-ns 3.9 J/token 4.6e+08 traced-wall-ns
BenchmarkModel/workload=w/model-16 1 4e+08 ns/op 4.4e+08 mean-ns 55 J/op 57 firsts-J/op 126 W 120 idle-W 3.4e+08 p10-ns 5.5e+08 p90-ns 16 tokens 2.5e+07 tpot-ns 3.6e+07 tpot-p90-ns 0.03 proc-spread
BenchmarkPaced/workload=w/paced-16 1 4.5e+08 ns/op 60 J/op
`
	ir := reportedInference(t, out)
	if ir == nil || ir.Tokens != 16 || ir.TPOTNS != 2.75e7 || ir.TPOTP90NS != 3.9e7 || ir.TTFTNS != 3e7 || ir.JPerToken != 3.9 || ir.KernelJ != 9 {
		t.Fatalf("read %+v", ir)
	}
	near := func(e *float64, want float64) bool { return e != nil && math.Abs(*e-want) < 1e-9 }
	if !near(ir.ErrWall, 4.8/4-1) || !near(ir.ErrTPOT, 2.75/2.5-1) || !near(ir.ErrEnergy, 63.0/55-1) || ir.InSpread == nil || !*ir.InSpread {
		t.Errorf("against the model: wall %v, tpot %v, energy %v, in spread %v", ir.ErrWall, ir.ErrTPOT, ir.ErrEnergy, ir.InSpread)
	}
	if !near(ir.ErrEnergyWithFirsts, 63.0/57-1) {
		t.Errorf("energy against the model's with the blocks' first inferences: %v", ir.ErrEnergyWithFirsts)
	}
	if ir.TracedWallNS != 4.6e8 || !near(ir.ErrTracedWall, 4.6/4-1) {
		t.Errorf("with the trace's times %g ns, error %v", ir.TracedWallNS, ir.ErrTracedWall)
	}
	if ir.PacedNS != 4.5e8 || ir.PacedJ != 60 || !near(ir.ErrVsPaced, 4.8/4.5-1) || ir.ProcessSpread == nil || *ir.ProcessSpread != 0.03 {
		t.Errorf("paced %g ns, %g J, error %v; process spread %v", ir.PacedNS, ir.PacedJ, ir.ErrVsPaced, ir.ProcessSpread)
	}
	var text strings.Builder
	ir.writeText(&text)
	for _, want := range []string{"inference wall (predicted)", "+20.0% vs the model", "inside the model's 10-90% spread", "time per output token", "+10.0% vs the model", "energy per output token",
		"paced timeline (measured)", ", 60 J; the predicted wall +6.7% from it",
		"with the trace's kernel times", "the trace's own kernel times in place of the replays: a check, not a prediction; +15.0% vs the model", "against the acceptance", "wall (within 5%) MISSED; time per output token MISSED; energy MISSED"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

// A signature without a replay takes its traced median and no energy,
// and is counted.
func TestPredictInferenceUnreplayed(t *testing.T) {
	in := generateInput(t)
	in.Entries = in.Entries[1:]
	inf, err := PredictInference(in)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, v := range in.Set.Timeline {
		if v.Sig == 0 {
			want++
		}
	}
	if inf.TracedOps != want || want == 0 {
		t.Errorf("%d ops took their traced time, want %d", inf.TracedOps, want)
	}
}

// tp2Name is the embedded tensor-parallel bundle.
const tp2Name = "2xh200_llama-7b-tp2_prefill"

// tp2Bundle opens the embedded TP2 prefill bundle and its ranks' sets.
func tp2Bundle(t *testing.T) (*workload.Bundle, []*signatures.Set) {
	t.Helper()
	fsys, err := traces.Bundle(tp2Name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := workload.OpenBundle(fsys, "embedded:"+tp2Name)
	if err != nil {
		t.Fatal(err)
	}
	sets, err := b.Sets()
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 2 {
		t.Fatalf("%d sets, want one per rank", len(sets))
	}
	return b, sets
}

// medianEntries "replays" every signature of set at its traced median,
// with 1 µJ per µs.
func medianEntries(set *signatures.Set) []replay.Entry {
	var entries []replay.Entry
	for _, sig := range set.Signatures {
		med := float64(sig.TracedNS.Median)
		entries = append(entries, replay.Entry{ID: sig.ID, Count: sig.Count, PartOf: sig.PartOf,
			Result: &replay.Result{Stats: replay.Stats{MedianNS: med}, Energy: &replay.Energy{JoulesPerOp: med * 1e-9, Watts: 1000}}})
	}
	return entries
}

// Each rank of a multi-rank bundle gets its own trace's host schedule.
func TestHostScheduleForRank(t *testing.T) {
	const name = tp2Name
	b, sets := tp2Bundle(t)
	for _, set := range sets {
		s, rt, err := HostScheduleFor("embedded:"+name, b, set)
		if err != nil {
			t.Fatal(err)
		}
		if s.Source != schedule.SourceTrace || len(rt.Activities) != len(set.Timeline) || s.Inferences[0].GPUOps() != len(set.Timeline) {
			t.Errorf("%s: source %s, %d activities and %d GPU ops against the set's %d invocations", set.Source.File,
				s.Source, len(rt.Activities), s.Inferences[0].GPUOps(), len(set.Timeline))
		}
	}
	other := *sets[0]
	other.Source.File = "elsewhere/trace.json.gz"
	if _, _, err := HostScheduleFor("embedded:"+name, b, &other); err == nil {
		t.Error("a set of none of the bundle's traces got a schedule")
	}
}

// The power limit bounds the predicted wall only with energy windows at
// least predict's defaults, all of the traced time's energy measured.
func TestShortEnergyWindows(t *testing.T) {
	for _, tc := range []struct {
		ticks  int
		warmup time.Duration
		share  float64
		want   string
	}{
		{0, time.Second, 0, ""},
		{31, time.Second, 1, ""},
		{101, 2 * time.Second, 0, ""},
		{4, 200 * time.Millisecond, 0.5, "energy windows of 4 ticks, a 200ms warm-up, energy measured for 50% of the traced time, short of 31 ticks after 1s over all of it"},
		{30, time.Second, 1, "energy windows of 30 ticks, short of 31 ticks after 1s over all of it"},
	} {
		o := FlowOptions{EnergyShare: tc.share}
		o.Measure.EnergyTicks, o.Measure.EnergyWarmup = tc.ticks, tc.warmup
		if got := o.shortEnergyWindows(); got != tc.want {
			t.Errorf("ticks %d, warm-up %v, share %g: %q, want %q", tc.ticks, tc.warmup, tc.share, got, tc.want)
		}
	}
}

// A replay on another machine than the capture's says whose host the
// schedule is, naming both machines; the same machine says nothing.
func TestOtherMachine(t *testing.T) {
	for _, tc := range []struct {
		capCPU, capGPU, cpu, gpu string
		want                     string
	}{
		{"Xeon A", "NVIDIA H100 80GB HBM3", "Xeon A", "NVIDIA H100 80GB HBM3", ""},
		{"", "", "Xeon A", "NVIDIA H200", ""},
		{"Xeon A", "NVIDIA H100 80GB HBM3", "Xeon A", "NVIDIA H200",
			"the host schedule is the capture machine's (CPU Xeon A, GPU NVIDIA H100 80GB HBM3); this machine has CPU Xeon A, GPU NVIDIA H200: the host's gaps are taken as recorded there"},
		{"Xeon A", "", "EPYC B", "", "the host schedule is the capture machine's (CPU Xeon A, GPU unknown); this machine has CPU EPYC B, GPU unknown: the host's gaps are taken as recorded there"},
	} {
		if got := otherMachine(tc.capCPU, tc.capGPU, tc.cpu, tc.gpu); got != tc.want {
			t.Errorf("otherMachine(%q, %q, %q, %q) = %q, want %q", tc.capCPU, tc.capGPU, tc.cpu, tc.gpu, got, tc.want)
		}
	}
	if cpu := HostCPU(); cpu == "" {
		t.Log("this machine's /proc/cpuinfo names no model")
	}
}

// The embedded TP2 prefill's two ranks, from their traces' host gaps and
// every signature at its traced median: simulated together, each rank's
// collectives pair with the other's, one rank's collectives wait for the
// other's, and the group is no faster than either rank alone.
func TestPredictGroupTP2(t *testing.T) {
	b, sets, ins := tp2Inputs(t, schedule.Constants{SubmitNS: 4000, QueueGapNS: 1000, WakeNS: 3000, MaxCallNS: DefaultMaxCallNS, WaitPowerW: 100})
	g, err := PredictGroup(ins)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(g.Summary())
	var peer float64
	for r, in := range ins {
		alone, err := PredictInference(in)
		if err != nil {
			t.Fatal(err)
		}
		if g.WallNS < alone.WallNS || g.Ranks[r].BusyNS <= 0 || g.Ranks[r].PeerWaitNS < 0 {
			t.Errorf("rank %d: group wall %.0f ns, alone %.0f ns; busy %.0f, peer wait %.0f", r, g.WallNS, alone.WallNS, g.Ranks[r].BusyNS, g.Ranks[r].PeerWaitNS)
		}
		peer += g.Ranks[r].PeerWaitNS
	}
	if peer <= 0 || g.EnergyJ != g.Ranks[0].EnergyJ+g.Ranks[1].EnergyJ {
		t.Errorf("peer waits %.0f ns in all, energy %g J", peer, g.EnergyJ)
	}
	if _, err := PredictGroup(ins[:1]); err == nil {
		t.Error("a group of one rank: no error")
	}
	// The bundle's measured run: the group's wall against the slower
	// rank's, its energy against the two GPUs' together. The run recorded
	// no spans: its median inference is its mean wall, and said so.
	m, err := b.Measured()
	if err != nil || m == nil {
		t.Fatalf("the bundle's measured run: %v", err)
	}
	if g.MedianWallNS <= 0 || g.MedianWallNS != max(g.Ranks[0].MedianWallNS, g.Ranks[1].MedianWallNS) {
		t.Errorf("group median wall %g ns, the ranks' %g and %g", g.MedianWallNS, g.Ranks[0].MedianWallNS, g.Ranks[1].MedianWallNS)
	}
	if line := g.againstMeasured(sets, m); !strings.Contains(line, "wall median") ||
		!strings.Contains(line, "against the measured wall per inference (no spans recorded: a mean)") ||
		!strings.Contains(line, "against the measured mean wall per inference") || !strings.Contains(line, "J against") {
		t.Errorf("against the measured run: %q", line)
	}
	if line := g.againstMeasured(sets, nil); line != "" {
		t.Errorf("no measured run: %q", line)
	}
}

// With the graph launch's cost measured, the same decode is predicted
// under CUDA graphs beside: the host's gaps inside each run of ops go,
// one launch of the measured cost stands for them, so the host-bound
// decode runs faster and draws less, and a launch cost that grows makes
// it slower.
func TestPredictInferenceUnderGraphs(t *testing.T) {
	in := generateInput(t)
	var asked []int
	in.GraphLaunch = func(n int) int64 { asked = append(asked, n); return 5000 }
	inf, err := PredictInference(in)
	if err != nil {
		t.Fatal(err)
	}
	var w *WhatIf
	for i := range inf.WhatIfs {
		if strings.HasPrefix(inf.WhatIfs[i].Name, "under CUDA graphs") {
			w = &inf.WhatIfs[i]
		}
	}
	if w == nil || len(asked) != 1 || asked[0] < 2 {
		t.Fatalf("what-ifs %+v; graph sizes asked %v", inf.WhatIfs, asked)
	}
	t.Logf("%s: wall %.4g ms against %.4g ms, %.4g J against %.4g J", w.Name, w.WallNS/1e6, inf.WallNS/1e6, w.EnergyJ, inf.EnergyJ)
	if w.WallNS >= inf.WallNS || w.EnergyJ >= inf.EnergyJ || w.WallNS < inf.BusyNS {
		t.Errorf("under graphs: wall %.0f ns, %g J; captured %.0f ns, %g J, busy %.0f ns", w.WallNS, w.EnergyJ, inf.WallNS, inf.EnergyJ, inf.BusyNS)
	}
	in.GraphLaunch = func(int) int64 { return 50_000_000 }
	slow, err := PredictInference(in)
	if err != nil {
		t.Fatal(err)
	}
	if last := slow.WhatIfs[len(slow.WhatIfs)-1]; last.WallNS <= w.WallNS {
		t.Errorf("a 50 ms launch: wall %.0f ns, not above the 5 µs launch's %.0f", last.WallNS, w.WallNS)
	}
}

// The acceptance holds the wall within 5% where the measured processes
// agree within 5% (or one ran), else to the run's 10-90% spread; the time
// per output token and the energy within 5%.
func TestInferenceVerdict(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	b := func(v bool) *bool { return &v }
	for _, tc := range []struct {
		ir   InferenceReport
		want string
	}{
		{InferenceReport{}, ""},
		{InferenceReport{ErrWall: f(-0.001), ErrTPOT: f(-0.004), ErrEnergy: f(0.068), ProcessSpread: f(0.02), InSpread: b(true)},
			"wall (within 5%) met; time per output token met; energy MISSED"},
		{InferenceReport{ErrWall: f(-0.089), ErrTPOT: f(-0.106), ErrEnergy: f(-0.086), InSpread: b(true)},
			"wall (within 5%) MISSED; time per output token MISSED; energy MISSED"},
		{InferenceReport{ErrWall: f(0.385), ErrTPOT: f(0.329), ErrEnergy: f(0.079), ProcessSpread: f(0.09), InSpread: b(true)},
			"wall (processes 9% apart: inside the 10-90% spread) met; time per output token MISSED; energy MISSED"},
		{InferenceReport{ErrWall: f(0.5), ProcessSpread: f(0.3), InSpread: b(false)},
			"wall (processes 30% apart: inside the 10-90% spread) MISSED"},
		{InferenceReport{ErrWall: f(0.04), ProcessSpread: f(0.3)}, "wall (within 5%) met"},
	} {
		if got := tc.ir.verdict(); got != tc.want {
			t.Errorf("verdict of %+v = %q, want %q", tc.ir, got, tc.want)
		}
	}
}

func TestQueueTries(t *testing.T) {
	for _, c := range []struct {
		q    replay.QueueProbe
		want string
	}{
		{replay.QueueProbe{}, ""},
		{replay.QueueProbe{Tries: 1, BlockerNS: 5e6}, ""},
		{replay.QueueProbe{Tries: 3, BlockerNS: 20e6}, "; the queue probe ran 3 times, the host not queueing ahead of shorter blockers, the last 20000 µs"},
	} {
		if got := queueTries(c.q); got != c.want {
			t.Errorf("queueTries(%+v) = %q, want %q", c.q, got, c.want)
		}
	}
}

// reportedInference is the report's whole inference of the first workload
// of the benchmark output out.
func reportedInference(t *testing.T, out string) *InferenceReport {
	t.Helper()
	rs, err := ReadResults([]Input{{Name: "x", Reader: strings.NewReader(out)}})
	if err != nil {
		t.Fatal(err)
	}
	wp := &WorkloadPrediction{}
	wp.inference(rs.Workloads[0], ReportOptions{})
	return wp.Inference
}

// inferenceRoundTrip writes inf's benchmark output for set, then model
// (benchmark lines, "" for none), reads both back through Report, and
// returns what it wrote and the workload's inference report.
func inferenceRoundTrip(t *testing.T, set *signatures.Set, inf *Inference, model string) (string, *InferenceReport) {
	t.Helper()
	fr := &FlowResult{Set: set, GPU: "g", Inference: inf}
	var buf bytes.Buffer
	if err := fr.WriteBench(&buf, "p"); err != nil {
		t.Fatal(err)
	}
	written := buf.String()
	buf.WriteString(model)
	p, err := Report([]Input{{Name: "x.bench", Reader: &buf}}, []*signatures.Set{set}, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Workloads) != 1 || p.Workloads[0].Inference == nil {
		t.Fatalf("no inference read back (%d workloads)", len(p.Workloads))
	}
	return written, p.Workloads[0].Inference
}

// tp2Inputs are the embedded TP2 prefill's bundle, its ranks' sets, and
// the ranks as inference inputs: each rank's host gaps from its trace,
// every signature at its traced median, and constants c.
func tp2Inputs(t *testing.T, c schedule.Constants) (*workload.Bundle, []*signatures.Set, []InferenceInput) {
	t.Helper()
	b, sets := tp2Bundle(t)
	var ins []InferenceInput
	for _, set := range sets {
		s, rt, err := HostScheduleFor("embedded:"+tp2Name, b, set)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, InferenceInput{Set: set, Runtime: rt, Schedule: s, Entries: medianEntries(set), Constants: c})
	}
	return b, sets, ins
}

// Without energy measured the host probe skips its power windows, and
// its line says the waiting power was not measured.
func TestFlowHostProbePower(t *testing.T) {
	for _, tc := range []struct {
		energy, noPower, want bool
	}{
		{energy: true, want: false},
		{energy: true, noPower: true, want: true},
		{energy: false, want: true},
	} {
		o := FlowOptions{Measure: replay.Options{Energy: tc.energy}, HostProbe: replay.HostProbeOptions{NoPower: tc.noPower}}
		if got := o.hostProbe().NoPower; got != tc.want {
			t.Errorf("energy %v, NoPower %v: the probe's NoPower %v, want %v", tc.energy, tc.noPower, got, tc.want)
		}
	}
	p := replay.HostProbe{WaitPowerW: 119.06, IdleW: 85}
	if got, want := waitPower(p, false), "power while waiting 119.1 W (idle 85.0 W)"; got != want {
		t.Errorf("waitPower = %q, want %q", got, want)
	}
	if got := waitPower(p, true); !strings.Contains(got, "not measured") {
		t.Errorf("without power windows: %q", got)
	}
}
