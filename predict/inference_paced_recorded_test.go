package predict

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordedInPlaceEnergy reads the outputs of kreplay predict -model
// measured on an H200 with the energy in place (docs/whole-inference.md,
// section 4; testdata/inference-paced/NAME.bench, the bench files of the
// judged runs that results/h200/inference-hook/ keeps as raw3.tar.xz)
// through the report path and holds each to what its printed report
// recorded: the energy design in place; J/op the formula's, recomputed
// from the output's own paced-J/op, paced-wall-ns, wait-W and mean wall
// (ns/op), within 0.1%; the errors against the measured run (the energy,
// the isolated total beside it, the wall as the report judges it and, for
// a decode, the time per output token) within 0.1 points of the recorded
// ones. Two of the six are recorded misses of the 5% bound (the energies
// of inf-l1b-sdpa-prefill-b8 and inf-gpt2m-eager-prefill-b1). A change to
// how the report reads or judges the in-place energy fails here.
func TestRecordedInPlaceEnergy(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name               string
		errEnergy, errIsol float64 // recorded, against the measured run
		errWall            float64 // the median's, where the output has median-wall-ns
		errTPOT            float64 // NaN for a prefill
		energyMet          bool
	}{
		{name: "inf-qwen05b-eager-decode-b1", errEnergy: -0.042, errIsol: 0.023, errWall: -0.020, errTPOT: -0.019, energyMet: true},
		{name: "inf-l1b-sdpa-prefill-b8", errEnergy: 0.062, errIsol: 0.275, errWall: 0.010, errTPOT: nan},
		{name: "inf-l1b-sdpa-decode-b8", errEnergy: 0.025, errIsol: 0.043, errWall: -0.003, errTPOT: 0.000, energyMet: true},
		{name: "inf-gpt2m-sdpa-decode-b16", errEnergy: -0.022, errIsol: -0.064, errWall: -0.014, errTPOT: -0.015, energyMet: true},
		{name: "inf-gpt2m-eager-prefill-b1", errEnergy: 0.060, errIsol: 0.121, errWall: -0.030, errTPOT: nan},
		{name: "inf-gpt2m-eager-decode-b1", errEnergy: -0.034, errIsol: -0.006, errWall: -0.006, errTPOT: -0.003, energyMet: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inputs, err := ReadFiles([]string{filepath.Join("testdata", "inference-paced", tc.name+".bench")})
			if err != nil {
				t.Fatal(err)
			}
			rs, err := ReadResults(inputs)
			if err != nil {
				t.Fatal(err)
			}
			w := rs.Workload(strings.TrimPrefix(tc.name, "inf-"))
			if w == nil || w.Inference.Runs() != 1 || w.Model.Runs() != 1 {
				t.Fatalf("workloads %v: want %s with one inference and one model run", rs.WorkloadNames(), tc.name)
			}
			wp := &WorkloadPrediction{}
			wp.inference(w, ReportOptions{})
			ir := wp.Inference
			if ir.EnergyDesign != EnergyInPlace || ir.NotInPlace != "" {
				t.Fatalf("energy design %q (%q), want in place", ir.EnergyDesign, ir.NotInPlace)
			}
			// The formula on the output's own figures: the paced pass's
			// energy + waiting power x (mean wall - the pass's wall).
			if want := ir.PassJ + ir.WaitW*(ir.WallNS-ir.PassWallNS)/1e9; math.Abs(ir.EnergyJ/want-1) > 0.001 {
				t.Errorf("J/op %.6g, the formula gives %.6g (paced %.6g J, %.6g W, wall %.6g ns, pass %.6g ns)",
					ir.EnergyJ, want, ir.PassJ, ir.WaitW, ir.WallNS, ir.PassWallNS)
			}
			within := func(what string, got *float64, want float64) {
				t.Helper()
				switch {
				case got == nil:
					t.Errorf("%s: none, want %+.1f%%", what, 100*want)
				case math.Abs(*got-want) > 0.001:
					t.Errorf("%s %+.2f%%, want %+.1f%% (within 0.1 points)", what, 100**got, 100*want)
				}
			}
			within("energy error", ir.ErrEnergy, tc.errEnergy)
			within("isolated total's error", ir.ErrIsolated, tc.errIsol)
			if !ir.MedianJudged || ir.MedianWallNS == 0 {
				t.Errorf("median judged %v (median wall %g ns): every output has median-wall-ns and its model run a spread", ir.MedianJudged, ir.MedianWallNS)
			}
			within("wall error", ir.ErrWall, tc.errWall)
			if math.IsNaN(tc.errTPOT) {
				if ir.Tokens != 0 || ir.ErrTPOT != nil {
					t.Errorf("a prefill with %g tokens, a time per output token error %v", ir.Tokens, ir.ErrTPOT)
				}
			} else {
				within("time per output token error", ir.ErrTPOT, tc.errTPOT)
			}
			if met := strings.Contains(ir.Verdict, "energy met"); met != tc.energyMet {
				t.Errorf("verdict %q: energy met %v, want %v", ir.Verdict, met, tc.energyMet)
			}
			var text bytes.Buffer
			ir.writeEnergy(&text)
			if !strings.Contains(text.String(), "\tin place: the paced timeline's ") {
				t.Errorf("energy line %q, want the in-place design's", text.String())
			}
		})
	}
}
