package whatif

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/errtest"
	"github.com/kreplay/kreplay/internal/traces"
	"github.com/kreplay/kreplay/predict"
	"github.com/kreplay/kreplay/signatures"
)

// recordedBench is the recorded H100 output of the BLOOM-560M prefill.
var recordedBench = filepath.Join("..", "predict", "testdata", "h100-bloom-560m_prefill.bench")

// The baseline from recorded benchmark output is kreplay predict's: its
// total and each replaced signature's median ns/op. Here the what-if
// replaces BLOOM's attention scores (the key copy, baddbmm with its
// memset, the mask add and the softmax) with a synthetic kernel of 50 µs.
func TestBaselineFromRecordedBench(t *testing.T) {
	name := "h100_bloom-560m_prefill.trace.json.gz"
	data, err := traces.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	set, err := signatures.Import(bytesReader(data), name, signatures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Find(set, []string{"aten::copy_", "aten::baddbmm", "aten::add", "aten::_softmax"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Runs) != 24 || len(m.Variants) != 1 {
		t.Fatalf("%d runs in %d variants, want one a layer (24)", len(m.Runs), len(m.Variants))
	}
	parts := 0
	for _, r := range m.Replaced {
		if r.PartOf != "" {
			parts++
		}
	}
	if parts != 1 {
		t.Errorf("%d replaced parts, want baddbmm's memset", parts)
	}
	b, err := BaselineFromBench(recordedBench, set, m)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := predict.Report(mustRead(t, recordedBench), []*signatures.Set{set}, predict.ReportOptions{})
	if err != nil || len(rep.Workloads) != 1 {
		t.Fatalf("%v, %d workloads", err, len(rep.Workloads))
	}
	if b.TotalNS != rep.Workloads[0].PredictedNS.Center || b.TotalNS <= 0 {
		t.Errorf("baseline total %g, report %g", b.TotalNS, rep.Workloads[0].PredictedNS.Center)
	}
	p, err := Predict(m, b, []Times{{NS: 50e3}})
	if err != nil {
		t.Fatal(err)
	}
	var replaced float64
	for _, r := range m.Replaced {
		if r.PartOf == "" {
			replaced += b.Sigs[r.ID].NS * float64(r.Invocations)
		}
	}
	if math.Abs(p.ReplacedNS-replaced) > 1e-6*replaced || p.FusedNS != 24*50e3 || p.SavingNS != p.ReplacedNS-p.FusedNS ||
		p.NewNS != b.TotalNS-p.SavingNS || p.Energy {
		t.Errorf("prediction %+v, replaced %g", p, replaced)
	}
	t.Logf("replaced %.1f µs, fused %.1f µs: %.1f -> %.1f µs; energy: %s", p.ReplacedNS/1e3, p.FusedNS/1e3, p.BaseNS/1e3, p.NewNS/1e3, p.NoEnergy)

	if _, err := BaselineFromBench(filepath.Join("..", "cmd", "kreplay", "testdata", "inspect_default.golden"), set, m); err == nil {
		t.Error("a file without benchmark lines gave a baseline")
	}
	llama := llamaSet(t)
	lm, _ := Find(llama, RecipeByName("llama-rmsnorm").Ops)
	if _, err := BaselineFromBench(recordedBench, llama, lm); err == nil || !strings.Contains(err.Error(), "no results for workload llama-7b_prefill") {
		t.Errorf("another workload's output: %v", err)
	}
}

func mustRead(t *testing.T, path string) []predict.Input {
	t.Helper()
	in, err := predict.ReadFiles([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestPredict(t *testing.T) {
	m := &Match{
		Runs:     make([]Run, 3),
		Variants: []Variant{{Runs: 2}, {Runs: 1}},
		Replaced: []Replaced{{ID: "a", Invocations: 3}, {ID: "b", Invocations: 6}, {ID: "m", PartOf: "b", Invocations: 3}},
	}
	full := &Baseline{TotalNS: 1000, TotalJ: 10, Sigs: map[string]Times{"a": {NS: 20, J: 0.2}, "b": {NS: 10, J: 0.1}}}
	for _, c := range []struct {
		name  string
		base  *Baseline
		fused []Times
		want  Prediction
		err   string
	}{
		// 3x20 + 6x10 = 120 replaced; 2x15 + 1x30 = 60 fused.
		{"time and energy", full, []Times{{NS: 15, J: 0.1}, {NS: 30, J: 0.3}},
			Prediction{Runs: 3, ReplacedNS: 120, FusedNS: 60, SavingNS: 60, BaseNS: 1000, NewNS: 940,
				Energy: true, ReplacedJ: 1.2, FusedJ: 0.5, SavingJ: 0.7, BaseJ: 10, NewJ: 9.3}, ""},
		{"no energy for the kernel", full, []Times{{NS: 15}, {NS: 30, J: 0.3}},
			Prediction{Runs: 3, ReplacedNS: 120, FusedNS: 60, SavingNS: 60, BaseNS: 1000, NewNS: 940,
				NoEnergy: "the fused kernel of variant 0 has no energy"}, ""},
		{"no totals", &Baseline{Sigs: full.Sigs}, []Times{{NS: 15, J: 0.1}, {NS: 30, J: 0.3}},
			Prediction{Runs: 3, ReplacedNS: 120, FusedNS: 60, SavingNS: 60, Energy: true, ReplacedJ: 1.2, FusedJ: 0.5, SavingJ: 0.7}, ""},
		{"missing signature", &Baseline{Sigs: map[string]Times{"a": {NS: 20}}}, []Times{{NS: 1}, {NS: 1}}, Prediction{}, "signature b"},
		{"missing variant", full, []Times{{NS: 1}}, Prediction{}, "1 fused kernel times for 2 variants"},
		{"unmeasured kernel", full, []Times{{NS: 1}, {}}, Prediction{}, "variant 1"},
	} {
		p, err := Predict(m, c.base, c.fused)
		if !errtest.Check(t, c.name, err, c.err) {
			continue
		}
		got := *p
		for _, f := range []*float64{&got.ReplacedJ, &got.FusedJ, &got.SavingJ, &got.NewJ} {
			*f = math.Round(*f*1e9) / 1e9
		}
		if got != c.want {
			t.Errorf("%s: %+v\nwant %+v", c.name, got, c.want)
		}
	}
}
