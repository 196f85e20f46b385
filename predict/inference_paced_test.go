package predict

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/schedule"
)

// pacedTestInference is a predicted inference of the isolated design:
// kernels 10 J + waiting 2 J over a 100 ms mean wall, 100 W while waiting.
func pacedTestInference(wallNS, tokens float64) *Inference {
	inf := &Inference{WallNS: wallNS, MedianWallNS: wallNS, BusyNS: 80e6, KernelJ: 10, WaitJ: 2, Tokens: tokens,
		Constants: schedule.Constants{WaitPowerW: 100}}
	inf.isolatedEnergy("no paced timeline measured")
	return inf
}

// pacedWindow is a paced timeline whose energy window holds ops passes
// over seconds, j J a pass.
func pacedWindow(j, seconds, ops float64) *replay.PacedResult {
	return &replay.PacedResult{Passes: 20, Wall: replay.Spread{MedianNS: 1e8},
		Energy: &replay.Energy{JoulesPerOp: j, Seconds: seconds, Ops: ops}}
}

// The kernels' energy in place: the paced pass's energy plus the waiting
// power over the wall beyond the window's wall per pass (less where the
// wall is shorter); no paced energy keeps the isolated design, saying why.
func TestPacedEnergy(t *testing.T) {
	for _, tt := range []struct {
		name          string
		wallNS        float64
		tokens        float64
		r             *replay.PacedResult
		applied       bool
		wantJ         float64
		wantJPerToken float64
		wantWindowNS  float64
		why           string
	}{
		{name: "wall equals the pass", wallNS: 100e6, r: pacedWindow(9, 2, 20), applied: true, wantJ: 9, wantWindowNS: 100e6},
		{name: "wall longer than the pass", wallNS: 120e6, r: pacedWindow(9, 2, 20), applied: true, wantJ: 9 + 100*0.02, wantWindowNS: 100e6},
		{name: "wall shorter than the pass", wallNS: 80e6, r: pacedWindow(9, 2, 20), applied: true, wantJ: 9 - 100*0.02, wantWindowNS: 100e6},
		{name: "tokens", wallNS: 120e6, tokens: 8, r: pacedWindow(9, 2, 20), applied: true, wantJ: 11, wantJPerToken: 11.0 / 8, wantWindowNS: 100e6},
		{name: "no paced timeline", wallNS: 100e6, tokens: 4, r: nil, wantJ: 12, wantJPerToken: 3, why: "no paced timeline"},
		{name: "energy failed", wallNS: 100e6, r: &replay.PacedResult{EnergyErr: "window too short"}, wantJ: 12, why: "the paced timeline's energy: window too short"},
		{name: "no energy window", wallNS: 100e6, r: &replay.PacedResult{}, wantJ: 12, why: "measured no energy window"},
		{name: "zero passes", wallNS: 100e6, r: pacedWindow(9, 2, 0), wantJ: 12, why: "0 passes over 2 s"},
		{name: "zero length", wallNS: 100e6, r: pacedWindow(9, 0, 20), wantJ: 12, why: "20 passes over 0 s"},
		{name: "zero energy", wallNS: 100e6, r: pacedWindow(0, 2, 20), wantJ: 12, why: "energy per pass is 0 J"},
		{name: "in place not positive", wallNS: 10e6, r: pacedWindow(5, 2, 20), wantJ: 12, why: "not positive"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inf := pacedTestInference(tt.wallNS, tt.tokens)
			if got := PacedEnergy(inf, tt.r); got != tt.applied {
				t.Fatalf("applied %v, want %v (%s)", got, tt.applied, inf.NotInPlace)
			}
			if math.Abs(inf.EnergyJ-tt.wantJ) > 1e-9 || math.Abs(inf.JPerToken-tt.wantJPerToken) > 1e-9 {
				t.Errorf("energy %g J, %g J/token; want %g, %g", inf.EnergyJ, inf.JPerToken, tt.wantJ, tt.wantJPerToken)
			}
			if inf.IsolatedJ != 12 || inf.KernelJ != 10 || inf.WaitJ != 2 {
				t.Errorf("isolated %g J (kernels %g + waiting %g), want 12 = 10 + 2 kept", inf.IsolatedJ, inf.KernelJ, inf.WaitJ)
			}
			if !tt.applied {
				if inf.EnergyDesign != EnergyIsolated || !strings.Contains(inf.NotInPlace, tt.why) || inf.PacedJ != 0 || inf.PacedWallNS != 0 {
					t.Errorf("design %q, why %q, paced %g J over %g ns; want isolated, why containing %q", inf.EnergyDesign, inf.NotInPlace, inf.PacedJ, inf.PacedWallNS, tt.why)
				}
				return
			}
			if inf.EnergyDesign != EnergyInPlace || inf.NotInPlace != "" || inf.PacedJ != tt.r.Energy.JoulesPerOp || math.Abs(inf.PacedWallNS-tt.wantWindowNS) > 1e-6 {
				t.Errorf("design %q (%q), paced %g J over %g ns; want in place, %g J over %g ns", inf.EnergyDesign, inf.NotInPlace, inf.PacedJ, inf.PacedWallNS,
					tt.r.Energy.JoulesPerOp, tt.wantWindowNS)
			}
			// Falling back afterwards restores the isolated energy.
			inf.isolatedEnergy("test")
			if inf.EnergyJ != 12 || inf.EnergyDesign != EnergyIsolated || inf.PacedJ != 0 {
				t.Errorf("after falling back: %g J, design %q, paced %g J", inf.EnergyJ, inf.EnergyDesign, inf.PacedJ)
			}
		})
	}
	if PacedEnergy(nil, pacedWindow(9, 2, 20)) {
		t.Error("a nil inference took a paced energy")
	}
}

// The bench values carry the in-place design's figures only where it was
// applied; J/op is the judged energy either way.
func TestPacedEnergyMetrics(t *testing.T) {
	units := func(inf *Inference) map[string]float64 {
		m := map[string]float64{}
		for _, v := range inf.Metrics() {
			m[v.Unit] = v.Value
		}
		return m
	}
	isolated := pacedTestInference(120e6, 0)
	m := units(isolated)
	for _, u := range []string{UnitIsolatedJ, UnitPacedJ, UnitPacedWallNS} {
		if _, ok := m[u]; ok {
			t.Errorf("the isolated design's metrics hold %s", u)
		}
	}
	if m["J/op"] != 12 {
		t.Errorf("isolated J/op %g, want 12", m["J/op"])
	}
	inPlace := pacedTestInference(120e6, 0)
	PacedEnergy(inPlace, pacedWindow(9, 2, 20))
	m = units(inPlace)
	for u, want := range map[string]float64{"J/op": 11, UnitIsolatedJ: 12, UnitPacedJ: 9, UnitPacedWallNS: 100e6, UnitKernelJ: 10, UnitWaitJ: 2} {
		if got, ok := m[u]; !ok || math.Abs(got-want) > 1e-6*want {
			t.Errorf("in-place metrics: %s %g (present %v), want %g", u, got, ok, want)
		}
	}
}

// The design reaches the report from the benchmark output: in place, its
// terms and the isolated total against the model, not judged; isolated,
// the reason read back from its line.
func TestPacedEnergyReport(t *testing.T) {
	const model = "BenchmarkModel/workload=bloom-560m_prefill/model 1 1.2e+08 ns/op 10 J/op\n"
	for _, tt := range []struct {
		name     string
		r        *replay.PacedResult
		design   string
		energyJ  float64
		line     string
		notInRow string
	}{
		{name: "in place", r: pacedWindow(9, 2, 20), design: EnergyInPlace, energyJ: 11,
			line:     "in place: the paced timeline's 9 J per pass + waiting 100.0 W x (wall - the paced pass's 100.000ms); +10.0% vs the model; the isolated replays' sum 12 J (+20.0% vs the model), not judged",
			notInRow: "isolated replays: no paced energy"},
		{name: "isolated", r: &replay.PacedResult{EnergyErr: "window too short"}, design: EnergyIsolated, energyJ: 12,
			line:     "kernels 10 J + waiting 2 J (100.0 W x (wall - busy)); +20.0% vs the model (isolated replays: no paced energy: the paced timeline's energy: window too short)",
			notInRow: "in place"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			set := prefillSet(t)
			inf := pacedTestInference(120e6, 0)
			PacedEnergy(inf, tt.r)
			_, ir := inferenceRoundTrip(t, set, inf, model)
			if ir.EnergyDesign != tt.design || math.Abs(ir.EnergyJ-tt.energyJ) > 1e-9 {
				t.Errorf("design %q, %g J; want %q, %g J", ir.EnergyDesign, ir.EnergyJ, tt.design, tt.energyJ)
			}
			if tt.design == EnergyInPlace {
				if ir.IsolatedJ != 12 || ir.PassJ != 9 || ir.PassWallNS != 100e6 || ir.ErrIsolated == nil || math.Abs(*ir.ErrIsolated-0.2) > 1e-9 || ir.NotInPlace != "" {
					t.Errorf("in place read back: isolated %g J (%v), pass %g J over %g ns, why %q", ir.IsolatedJ, ir.ErrIsolated, ir.PassJ, ir.PassWallNS, ir.NotInPlace)
				}
			} else if ir.IsolatedJ != 0 || ir.PassJ != 0 || ir.ErrIsolated != nil || ir.NotInPlace != "the paced timeline's energy: window too short" {
				t.Errorf("isolated read back: isolated %g J, pass %g J, why %q", ir.IsolatedJ, ir.PassJ, ir.NotInPlace)
			}
			var text bytes.Buffer
			ir.writeEnergy(&text)
			if s := text.String(); !strings.HasPrefix(s, "inference energy (predicted)\t") || !strings.Contains(s, tt.line) || strings.Contains(s, tt.notInRow) {
				t.Errorf("energy line %q: want it to hold %q, not %q", s, tt.line, tt.notInRow)
			}
		})
	}
}

// An output from before the designs were told apart reports its energy
// as it did: no design, no reason.
func TestPacedEnergyReportOlder(t *testing.T) {
	const out = "BenchmarkInference/workload=w/inference-16 1 4.8e+08 ns/op 4e+07 busy-ns 4.4e+08 gpu-idle-ns 0 host-wait-ns 63 J/op 9 kernel-J 54 wait-J 120 wait-W\n"
	ir := reportedInference(t, out)
	if ir.EnergyDesign != "" || ir.NotInPlace != "" || ir.IsolatedJ != 0 {
		t.Errorf("design %q (%q), isolated %g J; want none", ir.EnergyDesign, ir.NotInPlace, ir.IsolatedJ)
	}
	var text bytes.Buffer
	ir.writeEnergy(&text)
	if want := "inference energy (predicted)\t63 J\tkernels 9 J + waiting 54 J (120.0 W x (wall - busy))\n"; text.String() != want {
		t.Errorf("energy line %q, want %q", text.String(), want)
	}
}

// The isolated design's line round-trips its workload and reason.
func TestNotInPlaceLine(t *testing.T) {
	line := notInPlaceLine("w-1", "paced timeline: a\nb")
	w, why, ok := parseNotInPlaceLine(strings.TrimSuffix(line, "\n"))
	if !ok || w != "w-1" || why != "paced timeline: a b" {
		t.Errorf("%q read back as %q, %q, %v", line, w, why, ok)
	}
	for _, bad := range []string{"", "kreplay BenchmarkModel/workload=w/model: no model run: x", "kreplay BenchmarkInference/workload=w/other: energy of the isolated replays: x"} {
		if _, _, ok := parseNotInPlaceLine(bad); ok {
			t.Errorf("%q read as a reason", bad)
		}
	}
}

// The flow keeps the isolated design where no paced energy exists, and
// says so in its progress; without an inference it does nothing.
func TestEnergyNotInPlace(t *testing.T) {
	var progress bytes.Buffer
	(&FlowResult{}).energyNotInPlace("no recorded host schedule", &progress)
	if progress.Len() != 0 {
		t.Errorf("without an inference: %q", progress.String())
	}
	inf := pacedTestInference(120e6, 0)
	PacedEnergy(inf, pacedWindow(9, 2, 20))
	fr := &FlowResult{Inference: inf}
	fr.energyNotInPlace("no recorded host schedule", &progress)
	want := "inference energy: 12 J from the isolated replays (kernels 10 J + waiting 2 J): no paced energy: no recorded host schedule\n"
	if inf.EnergyDesign != EnergyIsolated || inf.EnergyJ != 12 || progress.String() != want {
		t.Errorf("design %q, %g J, progress %q; want isolated, 12 J, %q", inf.EnergyDesign, inf.EnergyJ, progress.String(), want)
	}
}
