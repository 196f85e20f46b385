package predict

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/signatures"
)

// An inference whose replays measured no energy carries none: no energy
// figure, no J/op, kernel-J, wait-J or J/token in its benchmark, the
// paced timeline's energy not taken, what-ifs without an energy, and a
// report that says "not measured" and judges no energy. One whose
// replays measured some keeps its energy as before. The inference is a
// recorded decode's (testdata/inference), its replays' energies taken
// away.
func TestPredictInferenceNoEnergy(t *testing.T) {
	for _, tt := range []struct {
		name     string
		keep     func(i int) bool // which entries keep their energy
		noEnergy bool
	}{
		{name: "no entry energy", keep: func(int) bool { return false }, noEnergy: true},
		{name: "some energy", keep: func(i int) bool { return i%2 == 0 }},
		{name: "every energy", keep: func(int) bool { return true }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in, _, _ := recordedInput(t, filepath.Join("testdata", "inference", "inf-gpt2m-eager-decode-b1"))
			in.GraphLaunch = func(int) int64 { return 5000 }
			for i := range in.Entries {
				if !tt.keep(i) {
					in.Entries[i].Result.Energy = nil
				}
			}
			inf, err := PredictInference(in)
			if err != nil {
				t.Fatal(err)
			}
			if len(inf.WhatIfs) < 2 || inf.Tokens == 0 {
				t.Fatalf("what-ifs %+v, %g tokens: want the faster host and CUDA graphs, a decode", inf.WhatIfs, inf.Tokens)
			}
			if tt.noEnergy {
				checkNoEnergy(t, inf)
			} else {
				checkEnergy(t, inf)
			}
			reportNoEnergy(t, in.Set, inf, tt.noEnergy)
		})
	}
}

// checkNoEnergy holds an inference without an energy to carrying none,
// the paced timeline's energy and the isolated design alike.
func checkNoEnergy(t *testing.T, inf *Inference) {
	t.Helper()
	zero := func() {
		t.Helper()
		if inf.EnergyJ != 0 || inf.KernelJ != 0 || inf.WaitJ != 0 || inf.JPerToken != 0 || inf.IsolatedJ != 0 || inf.PacedJ != 0 {
			t.Errorf("energy %g J (kernels %g, waiting %g, isolated %g, paced %g), %g J/token: want all 0",
				inf.EnergyJ, inf.KernelJ, inf.WaitJ, inf.IsolatedJ, inf.PacedJ, inf.JPerToken)
		}
		if inf.NoEnergy != NoEnergyMeasured || inf.EnergyDesign != EnergyNone || inf.NotInPlace != "" {
			t.Errorf("no energy %q, design %q (%q); want %q, %q", inf.NoEnergy, inf.EnergyDesign, inf.NotInPlace, NoEnergyMeasured, EnergyNone)
		}
	}
	zero()
	for _, w := range inf.WhatIfs {
		if w.EnergyJ != 0 {
			t.Errorf("what-if %s: %g J, want none", w.Name, w.EnergyJ)
		}
		if s := inf.whatIfText(w); !strings.HasSuffix(s, ", energy not measured") || strings.Contains(s, " J") {
			t.Errorf("what-if line %q", s)
		}
	}
	units := metricUnits(inf)
	for _, u := range []string{"J/op", UnitKernelJ, UnitWaitJ, UnitJPerToken, UnitIsolatedJ, UnitPacedJ} {
		if _, ok := units[u]; ok {
			t.Errorf("metrics hold %s without an energy", u)
		}
	}
	for _, u := range []string{"ns/op", UnitBusyNS, bench.UnitTPOTNS, UnitWaitW} {
		if _, ok := units[u]; !ok {
			t.Errorf("metrics lack %s", u)
		}
	}
	if s := inf.Summary(); !strings.Contains(s, "energy not measured") || strings.Contains(s, " J") {
		t.Errorf("summary %q", s)
	}
	// A paced timeline with an energy of its own does not give one, nor
	// does falling back to the isolated design.
	if PacedEnergy(inf, pacedWindow(9, 2, 20)) {
		t.Error("the paced energy taken without the replays' energies")
	}
	zero()
	var progress bytes.Buffer
	(&FlowResult{Inference: inf}).energyNotInPlace("paced timeline: no energy window", &progress)
	zero()
	if want := "inference energy: not measured: " + NoEnergyMeasured + "\n"; progress.String() != want {
		t.Errorf("progress %q, want %q", progress.String(), want)
	}
}

// checkEnergy holds an inference with replays' energies to the isolated
// design's energy, written as before.
func checkEnergy(t *testing.T, inf *Inference) {
	t.Helper()
	wait := inf.Constants.WaitPowerW * (inf.WallNS - inf.BusyNS) / 1e9
	if inf.NoEnergy != "" || inf.EnergyDesign != EnergyIsolated || !(inf.KernelJ > 0) || math.Abs(inf.WaitJ-wait) > 1e-9 ||
		inf.EnergyJ != inf.KernelJ+inf.WaitJ || math.Abs(inf.JPerToken-inf.EnergyJ/inf.Tokens) > 1e-12 {
		t.Errorf("no energy %q, design %q: %g J = kernels %g + waiting %g (want %g), %g J/token",
			inf.NoEnergy, inf.EnergyDesign, inf.EnergyJ, inf.KernelJ, inf.WaitJ, wait, inf.JPerToken)
	}
	for _, w := range inf.WhatIfs {
		if !(w.EnergyJ > 0) || !strings.Contains(inf.whatIfText(w), fmt.Sprintf(", %.4g J (", w.EnergyJ)) {
			t.Errorf("what-if %s: %g J, line %q", w.Name, w.EnergyJ, inf.whatIfText(w))
		}
	}
	units := metricUnits(inf)
	for u, want := range map[string]float64{"J/op": inf.EnergyJ, UnitKernelJ: inf.KernelJ, UnitWaitJ: inf.WaitJ, UnitJPerToken: inf.JPerToken} {
		if got, ok := units[u]; !ok || got != want {
			t.Errorf("metrics: %s %g (present %v), want %g", u, got, ok, want)
		}
	}
	if s := inf.Summary(); !strings.Contains(s, fmt.Sprintf(", %.4g J", inf.EnergyJ)) || !strings.Contains(s, "J/token") {
		t.Errorf("summary %q", s)
	}
	if !strings.HasPrefix(inf.EnergyText(), fmt.Sprintf("%.4g J from the isolated replays", inf.EnergyJ)) {
		t.Errorf("energy text %q", inf.EnergyText())
	}
}

// metricUnits is inf's benchmark values by unit.
func metricUnits(inf *Inference) map[string]float64 {
	m := map[string]float64{}
	for _, v := range inf.Metrics() {
		m[v.Unit] = v.Value
	}
	return m
}

// reportNoEnergy writes inf's benchmark beside a model run with an
// energy, reads it back through Report, and holds the inference's report
// to saying "not measured" without an energy, judging none, and to
// judging the energy with one.
func reportNoEnergy(t *testing.T, set *signatures.Set, inf *Inference, noEnergy bool) {
	t.Helper()
	_, ir := inferenceRoundTrip(t, set, inf, fmt.Sprintf("BenchmarkModel/workload=%s/model 1 %g ns/op %g J/op %g firsts-J/op 16 tokens %g tpot-ns\n",
		bench.Workload(set.Source), inf.WallNS, 2*max(inf.EnergyJ, 1), 2*max(inf.EnergyJ, 1), inf.TPOTNS))
	var text bytes.Buffer
	ir.writeText(&text)
	s := text.String()
	if !noEnergy {
		if ir.NoEnergy != "" || ir.ErrEnergy == nil || math.Abs(*ir.ErrEnergy+0.5) > 1e-6 || ir.ErrEnergyWithFirsts == nil ||
			!strings.Contains(s, "energy per output token") || !strings.Contains(ir.Verdict, "energy MISSED") {
			t.Errorf("with an energy: no energy %q, error %v (with firsts %v), verdict %q:\n%s", ir.NoEnergy, ir.ErrEnergy, ir.ErrEnergyWithFirsts, ir.Verdict, s)
		}
		return
	}
	if ir.NoEnergy != NoEnergyMeasured || ir.EnergyDesign != EnergyNone || ir.EnergyJ != 0 || ir.ErrEnergy != nil || ir.ErrEnergyWithFirsts != nil || ir.ErrIsolated != nil {
		t.Errorf("read back: no energy %q, design %q, %g J, errors %v %v %v", ir.NoEnergy, ir.EnergyDesign, ir.EnergyJ, ir.ErrEnergy, ir.ErrEnergyWithFirsts, ir.ErrIsolated)
	}
	if ir.ErrWall == nil || ir.ErrTPOT == nil {
		t.Errorf("the wall and the time per output token still judged: %v, %v", ir.ErrWall, ir.ErrTPOT)
	}
	want := "inference energy (predicted)\tnot measured\t" + NoEnergyMeasured + "\n"
	if !strings.Contains(s, want) || strings.Contains(s, "energy per output token") || strings.Contains(s, " J") ||
		!strings.HasSuffix(ir.Verdict, "; energy not measured") || strings.Contains(ir.Verdict, "energy met") || strings.Contains(ir.Verdict, "energy MISSED") {
		t.Errorf("verdict %q, text:\n%s\nwant it to hold %q and no energy figure", ir.Verdict, s, want)
	}
}

// An output whose inference has no J/op and no line saying why reports
// its energy as not measured all the same.
func TestInferenceReportNoJoules(t *testing.T) {
	const out = "BenchmarkInference/workload=w/inference-16 1 4.8e+08 ns/op 4e+07 busy-ns 4.4e+08 gpu-idle-ns 0 host-wait-ns 120 wait-W\n" +
		"BenchmarkModel/workload=w/model-16 1 4e+08 ns/op 55 J/op\n"
	ir := reportedInference(t, out)
	if ir.NoEnergy != "the output has no J/op for it" || ir.ErrEnergy != nil || ir.Verdict != "wall (within 5%) MISSED; energy not measured" {
		t.Errorf("no energy %q, energy error %v, verdict %q", ir.NoEnergy, ir.ErrEnergy, ir.Verdict)
	}
}

// The no-energy line round-trips its workload and reason, and is not
// read as the isolated design's, nor that one as it.
func TestNoEnergyLine(t *testing.T) {
	line := strings.TrimSuffix(noEnergyLine("w-1", "none\nmeasured"), "\n")
	if w, why, ok := parseNoEnergyLine(line); !ok || w != "w-1" || why != "none measured" {
		t.Errorf("%q read back as %q, %q, %v", line, w, why, ok)
	}
	if _, _, ok := parseNotInPlaceLine(line); ok {
		t.Errorf("%q read as the isolated design's", line)
	}
	if _, _, ok := parseNoEnergyLine(strings.TrimSuffix(notInPlaceLine("w", "x"), "\n")); ok {
		t.Error("the isolated design's line read as no energy")
	}
}

// A group whose ranks measured no energy has none, and says so.
func TestPredictGroupNoEnergy(t *testing.T) {
	b, sets, ins := tp2Inputs(t, generateInput(t).Constants)
	for _, in := range ins {
		for i := range in.Entries {
			in.Entries[i].Result.Energy = nil
		}
	}
	g, err := PredictGroup(ins)
	if err != nil {
		t.Fatal(err)
	}
	if g.EnergyJ != 0 || g.NoEnergy != "rank 0: "+NoEnergyMeasured || g.Ranks[1].EnergyJ != 0 || g.Ranks[1].EnergyDesign != EnergyNone {
		t.Errorf("group %g J (%q), rank 1 %g J of design %q", g.EnergyJ, g.NoEnergy, g.Ranks[1].EnergyJ, g.Ranks[1].EnergyDesign)
	}
	if s := g.Summary(); strings.Contains(s, " J") || strings.Count(s, "energy not measured") != 3 {
		t.Errorf("summary %q", s)
	}
	m, err := b.Measured()
	if err != nil || m == nil {
		t.Fatalf("the bundle's measured run: %v", err)
	}
	if line := g.againstMeasured(sets, m); !strings.Contains(line, "wall median") || strings.Contains(line, "J against") {
		t.Errorf("against the measured run: %q", line)
	}
}
