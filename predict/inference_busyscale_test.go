package predict

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/replay"
)

// The in-place energy's kernel share scaled to the predicted busy time:
// with pacedTestInference's 80 ms busy and 100 W waiting, and a paced pass
// of 9 J over 100 ms (10 J of waiting: 9 J is not above it), or of 19 J
// (9 J above it).
func TestScalePacedEnergy(t *testing.T) {
	for _, tt := range []struct {
		name      string
		passJ     float64
		gaps      *replay.TimelineGaps
		isolated  bool
		scaled    bool
		wantScale float64
		wantJ     float64
		why       string
	}{
		{name: "timeline 25% over busy", passJ: 19, gaps: &replay.TimelineGaps{BusyNS: 100e6}, scaled: true, wantScale: 0.8,
			wantJ: 9*0.8 + 100*0.12},
		{name: "timeline at busy", passJ: 19, gaps: &replay.TimelineGaps{BusyNS: 80e6}, scaled: true, wantScale: 1, wantJ: 9 + 100*0.12},
		{name: "no CUPTI busy", passJ: 19, gaps: nil, wantJ: 19 + 100*0.02, why: "no busy time of the timeline"},
		{name: "zero CUPTI busy", passJ: 19, gaps: &replay.TimelineGaps{}, wantJ: 19 + 100*0.02, why: "no busy time of the timeline"},
		{name: "kernels not above waiting", passJ: 9, gaps: &replay.TimelineGaps{BusyNS: 100e6}, wantJ: 9 + 100*0.02, why: "not above its waiting power"},
		{name: "isolated design untouched", passJ: 19, gaps: &replay.TimelineGaps{BusyNS: 100e6}, isolated: true, wantJ: 12},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inf := pacedTestInference(120e6, 4)
			if !tt.isolated && !PacedEnergy(inf, pacedWindow(tt.passJ, 2, 20)) {
				t.Fatalf("not in place: %s", inf.NotInPlace)
			}
			if got := ScalePacedEnergy(inf, tt.gaps); got != tt.scaled {
				t.Fatalf("scaled %v, want %v (%s)", got, tt.scaled, inf.NotScaled)
			}
			if math.Abs(inf.EnergyJ-tt.wantJ) > 1e-9 || math.Abs(inf.JPerToken-tt.wantJ/4) > 1e-9 {
				t.Errorf("energy %g J, %g J/token; want %g, %g", inf.EnergyJ, inf.JPerToken, tt.wantJ, tt.wantJ/4)
			}
			switch {
			case tt.scaled:
				if math.Abs(inf.BusyScale-tt.wantScale) > 1e-12 || math.Abs(inf.UnscaledJ-(tt.passJ+100*0.02)) > 1e-9 || inf.NotScaled != "" {
					t.Errorf("scale %g, unscaled %g J, why %q; want %g, %g J", inf.BusyScale, inf.UnscaledJ, inf.NotScaled, tt.wantScale, tt.passJ+2)
				}
			case tt.isolated:
				if inf.BusyScale != 0 || inf.NotScaled != "" || inf.EnergyDesign != EnergyIsolated {
					t.Errorf("isolated: scale %g, why %q, design %q", inf.BusyScale, inf.NotScaled, inf.EnergyDesign)
				}
			default:
				if inf.BusyScale != 0 || inf.UnscaledJ != 0 || !strings.Contains(inf.NotScaled, tt.why) || !strings.Contains(inf.EnergyText(), "not scaled to the predicted busy time") {
					t.Errorf("scale %g, unscaled %g, why %q (text %q); want none, why holding %q", inf.BusyScale, inf.UnscaledJ, inf.NotScaled, inf.EnergyText(), tt.why)
				}
			}
			// Taking the paced energy again, or falling back, clears the scale.
			PacedEnergy(inf, pacedWindow(19, 2, 20))
			if inf.BusyScale != 0 || inf.UnscaledJ != 0 || inf.NotScaled != "" {
				t.Errorf("after PacedEnergy again: scale %g, unscaled %g, why %q", inf.BusyScale, inf.UnscaledJ, inf.NotScaled)
			}
		})
	}
	if ScalePacedEnergy(nil, &replay.TimelineGaps{BusyNS: 1}) {
		t.Error("a nil inference was scaled")
	}
}

// A scaled energy writes its factor and the unscaled energy to the bench
// output, and the report reads them back: the judged energy scaled, the
// unscaled one beside it against the model, not judged.
func TestScalePacedEnergyReport(t *testing.T) {
	const model = "BenchmarkModel/workload=bloom-560m_prefill/model 1 1.2e+08 ns/op 20 J/op\n"
	set := prefillSet(t)
	inf := pacedTestInference(120e6, 0)
	PacedEnergy(inf, pacedWindow(19, 2, 20))
	ScalePacedEnergy(inf, &replay.TimelineGaps{BusyNS: 100e6}) // 9 x 0.8 + 12 = 19.2 J, unscaled 21 J
	units := map[string]float64{}
	for _, v := range inf.Metrics() {
		units[v.Unit] = v.Value
	}
	for u, want := range map[string]float64{"J/op": 19.2, UnitBusyScale: 0.8, UnitUnscaledJ: 21, UnitPacedJ: 19} {
		if got := units[u]; math.Abs(got-want) > 1e-9 {
			t.Errorf("metrics %s %g, want %g", u, got, want)
		}
	}
	if !strings.Contains(inf.EnergyText(), "x0.800 to the predicted busy time") || !strings.Contains(inf.EnergyText(), "(unscaled 21 J)") {
		t.Errorf("energy text %q", inf.EnergyText())
	}
	_, ir := inferenceRoundTrip(t, set, inf, model)
	if ir.BusyScale != 0.8 || ir.UnscaledJ != 21 || ir.ErrUnscaled == nil || math.Abs(*ir.ErrUnscaled-0.05) > 1e-9 ||
		ir.ErrEnergy == nil || math.Abs(*ir.ErrEnergy+0.04) > 1e-9 {
		t.Fatalf("read back %+v", ir)
	}
	var text bytes.Buffer
	ir.writeEnergy(&text)
	for _, want := range []string{"19.2 J\tin place: the paced timeline's 19 J per pass less waiting 100.0 W x its 100.000ms, x0.800 to the predicted busy time, + waiting x the wall; -4.0% vs the model",
		"unscaled 21 J (+5.0% vs the model), not judged"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("energy line %q: want it to hold %q", text.String(), want)
		}
	}
}
