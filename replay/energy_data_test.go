package replay

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kreplay/kreplay/internal/gztest"
)

// readProgress reads the entries of a run's gzipped progress file.
func readProgress(t *testing.T, path string) []Entry {
	t.Helper()
	// One JSON object a line, its entry under "entry" (predict.ProgressLine).
	var out []Entry
	dec := json.NewDecoder(bytes.NewReader(gztest.ReadFile(t, path)))
	for dec.More() {
		var l struct {
			Entry Entry `json:"entry"`
		}
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("%s: entry %d: %v", path, len(out)+1, err)
		}
		out = append(out, l.Entry)
	}
	return out
}

// TestEstimateEnergyRealRun estimates the energy of the signatures that an
// FP8 prefill's recorded predict run (H100, -energy-share 0.95, the
// context cache mode; results/h100/capture/) left unmeasured: their energy may not exceed what
// they would draw at the 700 W power limit for their kernel time, which
// the primers' time counted in did by far (1.44 J for 0.70 ms).
func TestEstimateEnergyRealRun(t *testing.T) {
	entries := readProgress(t, "testdata/l1b-fp8-prefill.progress.jsonl.gz")
	var measured, kernelS float64
	var unmeasured int
	for _, e := range entries {
		switch {
		case e.Result == nil:
		case e.Result.Energy != nil:
			measured += e.Result.Energy.JoulesPerOp * float64(e.Count)
		default:
			unmeasured++
			kernelS += e.Result.ReportedNS() * 1e-9 * float64(e.Count)
		}
	}
	if n := EstimateEnergy(entries); n != unmeasured || n == 0 {
		t.Fatalf("estimated %d entries, want the %d without an energy", n, unmeasured)
	}
	var est float64
	for _, e := range entries {
		if r := e.Result; r != nil && r.Energy != nil && r.Energy.Method == EstimatedMethod {
			est += r.Energy.JoulesPerOp * float64(e.Count)
			if r.Energy.Watts <= 0 || r.Energy.Watts > 1200 {
				t.Errorf("%s (%s): estimated at %.0f W", e.ID, e.Class, r.Energy.Watts)
			}
		}
	}
	if limit := 700 * kernelS; est <= 0 || est > limit {
		t.Errorf("the %d unmeasured signatures (%.3f ms of kernel time) estimated at %.3f J, want (0, %.3f]", unmeasured, kernelS*1e3, est, limit)
	}
	t.Logf("measured %.3f J, estimated %.3f J for %d signatures of %.3f ms", measured, est, unmeasured, kernelS*1e3)
}

// TestEnergyOpNS: a primed replay's energy window runs its kernel alone,
// so it is sized by the kernel time (in the FP8 prefill's run of
// testdata, 13 primed signatures had timed medians 10-20 times their
// kernels', and their windows ran at 245-544 W with host syncs between
// batches of a few dozen launches).
func TestEnergyOpNS(t *testing.T) {
	for _, c := range []struct {
		name   string
		r      Result
		primed bool
		want   float64
	}{
		{"unprimed: the timed median", Result{Stats: Stats{MedianNS: 1200}, KernelMedianNS: 1000}, false, 1200},
		{"primed: the kernel time", Result{Stats: Stats{MedianNS: 1.5e6}, KernelMedianNS: 2100}, true, 2100},
		{"primed without CUPTI: the timed median", Result{Stats: Stats{MedianNS: 1.5e6}}, true, 1.5e6},
	} {
		if got := energyOpNS(&c.r, c.primed); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
