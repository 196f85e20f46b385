package predict

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/signatures"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"
)

// TestRecordedOutput runs Report (and Diff, given two files) on recorded
// GPU benchmark output: testdata/*.bench, as written by
//
//	go test -p 1 -run '^$' -bench . -benchtime 1x -count 6 -v ./bench/... | tee predict/testdata/h100.bench
//
// (the *.energy.bench files with KREPLAY_ENERGY=1, see
// results/h100/bench-energy), with the generated packages' sets
// (./*/set.json) and any testdata/*.set.json. Without recorded output it
// skips.
func TestRecordedOutput(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.bench"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no recorded GPU benchmark output in testdata/*.bench yet; record one on a GPU machine (see the test's comment)")
	}
	paths, err := filepath.Glob(filepath.Join("..", "bench", "*", bench.SetFile))
	if err != nil {
		t.Fatal(err)
	}
	extra, _ := filepath.Glob(filepath.Join("testdata", "*.set.json"))
	sets, err := ReadSetFiles(append(paths, extra...))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			in, err := ReadFiles([]string{file})
			if err != nil {
				t.Fatal(err)
			}
			p, err := Report(in, sets, ReportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Workloads) == 0 {
				t.Fatalf("no workload of %s has a set (no set: %v)", file, p.NoSet)
			}
			for _, wp := range p.Workloads {
				checkPrediction(t, wp)
				checkRecorded(t, filepath.Base(file), wp)
			}
			var text bytes.Buffer
			if err := p.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if _, err := json.Marshal(p); err != nil {
				t.Fatal(err)
			}
			t.Logf("report of %s:\n%s", file, text.String())
		})
	}
	if len(files) >= 2 {
		a, _ := ReadFiles(files[:1])
		b, _ := ReadFiles(files[1:2])
		c, err := Diff(a, b, sets, DiffOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, wd := range c.Workloads {
			// With 1 run on a side no 95% interval of the total's change
			// exists: the range of the run pairs' ratios. A change can be
			// significant only where the run counts allow it.
			for _, d := range wd.Sigs {
				if d.Significant && d.Never {
					t.Errorf("%s: %s significant (p=%.3f) with run counts that can never be", wd.Workload, d.ID, d.P)
				}
			}
			if tot := wd.Total; tot != nil && min(tot.Runs[0], tot.Runs[1]) == 1 && !tot.ChangeRange {
				t.Errorf("%s: runs %v and an interval of the change %+v", wd.Workload, tot.Runs, tot.ChangeCI)
			}
		}
		var text bytes.Buffer
		if err := c.WriteText(&text, false); err != nil {
			t.Fatal(err)
		}
		t.Logf("diff %s %s:\n%s", files[0], files[1], text.String())
	}
}

// checkPrediction checks what must hold of any prediction.
func checkPrediction(t *testing.T, wp *WorkloadPrediction) {
	t.Helper()
	if wp.Measured == 0 {
		t.Errorf("%s: no signature measured", wp.Workload)
	}
	iv := wp.PredictedNS
	if !(iv.Lo <= iv.Center && iv.Center <= iv.Hi) || iv.Center <= 0 || math.IsNaN(iv.Center) {
		t.Errorf("%s: predicted %+v", wp.Workload, iv)
	}
	if wp.Coverage <= 0 || wp.Coverage > 1 || wp.Measured+wp.Missing+wp.Parts != wp.Signatures {
		t.Errorf("%s: coverage %g, %d measured + %d missing + %d parts of %d", wp.Workload, wp.Coverage, wp.Measured, wp.Missing, wp.Parts, wp.Signatures)
	}
	for _, s := range wp.Sigs {
		if s.ReplayNS.Center <= 0 || s.Tier < signatures.TierMemory || s.Tier > signatures.TierKernel {
			t.Errorf("%s: signature %s: %+v", wp.Workload, s.ID, s.ReplayNS)
		}
	}
}

// The re-recorded H100 output (testdata/h100-bloom-560m_prefill.bench,
// generated package, go test -bench) carries its configuration
// lines on every result, so that benchstat's -col gpu, -col driver and
// -col cublas group it: one column each, naming the H100, its driver and
// cuBLAS, and the GPU the trace came from (benchproc's projection, as
// benchstat uses it).
func TestRecordedConfiguration(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "h100-bloom-560m_prefill.bench"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var parser benchproc.ProjectionParser
	proj, err := parser.Parse("gpu,driver,cuda-driver,cublas,trace-gpu", nil)
	if err != nil {
		t.Fatal(err)
	}
	cols := map[string]int{}
	r := benchfmt.NewReader(f, "h100-bloom-560m_prefill.bench")
	for r.Scan() {
		if res, ok := r.Result().(*benchfmt.Result); ok {
			cols[proj.Project(res).String()]++
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cols) != 1 {
		t.Fatalf("columns %v, want one", cols)
	}
	for k, n := range cols {
		for _, want := range []string{"gpu:NVIDIA H100 80GB HBM3", "driver:580.", "cuda-driver:13.", "cublas:13.", "trace-gpu:NVIDIA H100 80GB HBM3"} {
			if !strings.Contains(k, want) {
				t.Errorf("column %q (%d results) lacks %q", k, n, want)
			}
		}
	}
}

// recordedErrors are the recorded outputs' errors as their records give
// them (results/h100/bench/, results/h100/bench-energy/): the predicted GPU
// time against the trace's busy time and, with energy, the predicted
// energy against the model run's. NaN where the output has none.
var recordedErrors = map[string]struct{ busy, energy float64 }{
	"h100-bloom-560m_prefill.bench":        {busy: -0.01102, energy: math.NaN()},
	"h100-bloom-560m_prefill.energy.bench": {busy: -0.01766, energy: 0.09374},
	"h100-llama-7b_prefill.energy.bench":   {busy: -0.06086, energy: 0.01244},
}

// checkRecorded holds a recorded output's prediction to its recorded
// errors, within 0.1 points: a change that moves one fails.
func checkRecorded(t *testing.T, file string, wp *WorkloadPrediction) {
	t.Helper()
	want, ok := recordedErrors[file]
	if !ok {
		t.Errorf("%s: no recorded errors to hold it to (add them to recordedErrors)", file)
		return
	}
	check := func(what string, got *float64, want float64) {
		switch {
		case math.IsNaN(want) && got != nil:
			t.Errorf("%s: %s error %+.4f, where the record has none", file, what, *got)
		case !math.IsNaN(want) && got == nil:
			t.Errorf("%s: no %s error, recorded %+.4f", file, what, want)
		case got != nil && math.Abs(*got-want) > 0.001:
			t.Errorf("%s: %s error %+.5f, recorded %+.5f (moved by more than 0.1 points)", file, what, *got, want)
		}
	}
	check("GPU time against busy", wp.ErrBusy, want.busy)
	check("energy against the model", wp.ErrEnergy, want.energy)
}
