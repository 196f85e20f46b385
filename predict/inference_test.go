package predict

import (
	"bytes"
	"math"
	"testing"

	"github.com/kreplay/kreplay/internal/traces"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/schedule"
	"github.com/kreplay/kreplay/signatures"
)

// generateInput is the embedded BLOOM-560M generate: its set, its
// runtime calls and the host schedule made from them (the trace's own, a
// guess), with every signature "replayed" at its traced median and 1 µJ
// per µs.
func generateInput(t *testing.T) InferenceInput {
	t.Helper()
	const name = "h100_bloom-560m_generate.trace.json.gz"
	data, err := traces.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	set, err := signatures.Import(bytes.NewReader(data), name, signatures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := signatures.ReadRuntime(bytes.NewReader(data), name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schedule.FromRuntime(rt)
	if err != nil {
		t.Fatal(err)
	}
	var entries []replay.Entry
	for _, sig := range set.Signatures {
		med := float64(sig.TracedNS.Median)
		entries = append(entries, replay.Entry{ID: sig.ID, Count: sig.Count, PartOf: sig.PartOf,
			Result: &replay.Result{Stats: replay.Stats{MedianNS: med}, Energy: &replay.Energy{JoulesPerOp: med * 1e-9, Watts: 1000}}})
	}
	return InferenceInput{Set: set, Runtime: rt, Schedule: s, Entries: entries,
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
	if ir == nil || math.Abs(ir.WallNS-inf.WallNS) > 1e-6*inf.WallNS || math.Abs(ir.EnergyJ-inf.EnergyJ) > 1e-6*inf.EnergyJ ||
		math.Abs(ir.BusyNS-inf.BusyNS) > 1e-6*inf.BusyNS {
		t.Fatalf("read back %+v, want the prediction's wall %g, energy %g", ir, inf.WallNS, inf.EnergyJ)
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
