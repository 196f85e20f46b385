package predict

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/kreplay/kreplay/internal/traces/tracetest"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// The host model with the trace's own kernel times on the recorded
// bundles, against their measured median inference: a change to the
// model that moves either by more than 0.1 points fails here. Recorded
// (this check on these bundles, 2026-11-28): the GPT-2-medium decode
// -0.2%, the Llama-1B-shaped prefill -5.1% (its measured run was
// power-capped; the profiled trace's kernels were not). The simulated
// median against the measured median (recorded the same day, when the
// median was added): +0.0% and -5.1%; the mean against the measured mean
// is computed beside.
func TestCheckWithTrace(t *testing.T) {
	for _, tc := range []struct {
		name           string
		err, errMedian float64
		exported       bool // through CheckWithTrace, reading the bundle; else the loaded inputs
	}{
		{"inf-gpt2m-eager-decode-b1", -0.0018, 0.0005, false},
		{"inf-l1b-sdpa-prefill-b8", -0.0512, -0.0508, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join("testdata", "inference", tc.name)
			r := loadRecorded(t, dir)
			var c *TracedCheck
			var err error
			if tc.exported {
				c, err = CheckWithTrace(filepath.Join(dir, "bundle"), r.b, r.sets)
			} else {
				c, err = checkInputs([]InferenceInput{{Set: r.sets[0], Runtime: r.rt, Schedule: r.s}}, r.b)
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Ranks != 1 || c.Source != "recorder" || c.Err == nil || math.Abs(*c.Err-tc.err) > 0.001 {
				t.Errorf("%v, want %+.4f", c, tc.err)
			}
			if c.ErrMedian == nil || math.Abs(*c.ErrMedian-tc.errMedian) > 0.001 || c.ErrMean == nil || c.MeasuredMeanNS <= 0 ||
				math.Abs(*c.ErrMedian-(c.MedianWallNS/c.MeasuredNS-1)) > 1e-12 || math.Abs(*c.ErrMean-(c.WallNS/c.MeasuredMeanNS-1)) > 1e-12 {
				t.Errorf("median %g ns (error %v), mean against the measured mean %g ns (error %v)", c.MedianWallNS, c.ErrMedian, c.MeasuredMeanNS, c.ErrMean)
			}
			t.Log(c)
		})
	}
}

// A collective stands in with its shortest traced run, which holds no
// wait for the other ranks; every other signature with its median.
func TestTracedEntries(t *testing.T) {
	set := tracetest.ImportSet(t, "2xh200_llama-7b-tp2_prefill.rank0.trace.json.gz")
	es := TracedEntries(set)
	if len(es) != len(set.Signatures) {
		t.Fatalf("%d entries for %d signatures", len(es), len(set.Signatures))
	}
	collectives := 0
	for i, sig := range set.Signatures {
		want := sig.TracedNS.Median
		if sig.Class == signatures.ClassCollective {
			want = sig.TracedNS.Min
			collectives++
		}
		if es[i].ID != sig.ID || es[i].ReplayNS() != float64(want) {
			t.Errorf("%s: %v, want %d ns", sig.ID, es[i].ReplayNS(), want)
		}
	}
	if collectives == 0 {
		t.Error("no collective in the TP2 trace")
	}
}

// TracedWall keeps the input's schedule and constants and swaps the
// replays for the trace's times: with the constants of no probe it is
// CheckWithTrace's wall; the inference's metrics carry it.
func TestTracedWall(t *testing.T) {
	dir := filepath.Join("testdata", "inference", "inf-gpt2m-eager-decode-b1")
	in, _, _ := recordedInput(t, dir)
	probe := in.Constants
	in.Constants = HostConstants(&replay.HostProbe{})
	w, median, err := TracedWall(in)
	// TestCheckWithTrace pins this bundle's check, made the same way.
	if err != nil || w <= 0 || median <= 0 {
		t.Fatalf("TracedWall %g, median %g (%v)", w, median, err)
	}
	in.Constants = probe
	inf, err := PredictInference(in)
	if err != nil {
		t.Fatal(err)
	}
	inf.TracedWallNS, inf.TracedMedianWallNS = w, median
	for unit, want := range map[string]float64{UnitTracedWallNS: w, UnitTracedMedianWallNS: median, UnitMedianWallNS: inf.MedianWallNS} {
		found := false
		for _, v := range inf.Metrics() {
			found = found || v.Unit == unit && v.Value == want
		}
		if !found || want <= 0 {
			t.Errorf("metrics %v lack %s %g", inf.Metrics(), unit, want)
		}
	}
}
