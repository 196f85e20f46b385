package workload

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The measured runs next to the shared traces: the single-GPU machine's
// runs and each rank of the tensor-parallel run.
func TestReadMeasured(t *testing.T) {
	m, err := ReadMeasured("testdata/measured.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		workload    string
		rank, world int
		machine     string
		wallS, j    float64
		wantErr     string
	}{
		{workload: "llama-7b-tp2_prefill", rank: 0, world: 2, machine: "2xh200_tp2", wallS: 0.12221, j: 40.2125},
		{workload: "llama-7b-tp2_prefill", rank: 1, world: 2, machine: "2xh200_tp2", wallS: 0.12228, j: 40.0098},
		{workload: "llama-7b_prefill", rank: 0, world: 1, machine: "h100", wallS: 0.062373, j: 42.4397},
		{workload: "llama-7b_prefill", rank: 0, world: 0, machine: "h100", wallS: 0.062373, j: 42.4397},
		{workload: "llama-7b-tp2_prefill", rank: 2, world: 2, wantErr: `testdata/measured.json: no run of workload "llama-7b-tp2_prefill" on rank 2 of 2`},
		{workload: "nope", rank: 0, world: 1, wantErr: "no run of workload"},
	}
	for _, tt := range tests {
		r, err := m.Lookup(tt.workload, tt.rank, tt.world)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s rank %d: err = %v, want %q", tt.workload, tt.rank, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s rank %d: %v", tt.workload, tt.rank, err)
			continue
		}
		if r.Machine != tt.machine || math.Abs(r.WallS-tt.wallS) > 1e-5 || math.Abs(r.EnergyJ-tt.j) > 1e-4 || r.Iters != 10 {
			t.Errorf("%s rank %d: %+v", tt.workload, tt.rank, r)
		}
	}
}

// Errors name the file and the field at fault.
func TestParseMeasuredErrors(t *testing.T) {
	tests := []struct {
		name, data, wantErr string
	}{
		{"not JSON", `{`, "m.json: unexpected end"},
		{"machine not an object", `{"a": 3}`, "m.json: a: want an object, got 3"},
		{"no runs", `{"a": {"gpu": "x"}}`, `m.json: a: neither "runs" nor ranks`},
		{"runs not an object", `{"a": {"runs": []}}`, "m.json: a.runs: want an object, got []"},
		{"wall missing", `{"a": {"runs": {"w": {"energy_j_per_iter": 1}}}}`, "m.json: a.runs.w.wall_s_per_iter: missing"},
		{"wall a string", `{"a": {"runs": {"w": {"wall_s_per_iter": "0.1"}}}}`, `m.json: a.runs.w.wall_s_per_iter: want a number, got "0.1"`},
		{"wall zero", `{"a": {"runs": {"w": {"wall_s_per_iter": 0}}}}`, "m.json: a.runs.w.wall_s_per_iter: 0 is not a positive time"},
		{"energy negative", `{"a": {"runs": {"w": {"wall_s_per_iter": 1, "energy_j_per_iter": -2}}}}`, "m.json: a.runs.w.energy_j_per_iter: negative energy -2"},
		{"energy with firsts negative", `{"a": {"runs": {"w": {"wall_s_per_iter": 1, "energy_j_per_iter_with_firsts": -1}}}}`, "m.json: a.runs.w.energy_j_per_iter_with_firsts: negative energy -1"},
		{"iters fractional", `{"a": {"runs": {"w": {"wall_s_per_iter": 1, "iters": 1.5}}}}`, "m.json: a.runs.w.iters: want an integer, got 1.5"},
		{"gpu a number", `{"a": {"gpu": 1, "runs": {}}}`, "m.json: a.gpu: want a string, got 1"},
		{"idle negative", `{"a": {"runs": {"w": {"wall_s_per_iter": 1, "idle_w": -70}}}}`, "m.json: a.runs.w.idle_w: negative power -70"},
		{"spread of two", `{"a": {"runs": {"w": {"wall_s_per_iter": 1, "span_ms_per_iter": [1, 2]}}}}`, "a.runs.w.span_ms_per_iter: want three times"},
		{"spread decreasing", `{"a": {"runs": {"w": {"wall_s_per_iter": 1, "span_ms_per_iter": [3, 2, 4]}}}}`, "a.runs.w.span_ms_per_iter: percentiles [3 2 4]"},
		{"spread not numbers", `{"a": {"runs": {"w": {"wall_s_per_iter": 1, "span_ms_per_iter": "fast"}}}}`, "a.runs.w.span_ms_per_iter: want three times"},
		{"process median zero", `{"a": {"runs": {"w": {"wall_s_per_iter": 1, "median_ms_per_process": [3, 0]}}}}`, "a.runs.w.median_ms_per_process: [3 0]: want positive times"},
		{"process medians a string", `{"a": {"runs": {"w": {"wall_s_per_iter": 1, "median_ms_per_process": "3"}}}}`, `a.runs.w.median_ms_per_process: want times in ms, got "3"`},
		{"rank missing", `{"a": {"r0": {"world": 2, "runs": {}}}}`, "m.json: a.r0.rank: missing"},
		{"rank out of world", `{"a": {"r0": {"rank": 2, "world": 2, "runs": {}}}}`, "m.json: a.r0.rank: rank 2 of world 2"},
		{"rank run", `{"a": {"r1": {"rank": 1, "world": 2, "runs": {"w": {"wall_s_per_iter": null}}}}}`, "m.json: a.r1.runs.w.wall_s_per_iter: 0 is not a positive time"},
	}
	for _, tt := range tests {
		_, err := ParseMeasured("m.json", []byte(tt.data))
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestMeasuredAmbiguous(t *testing.T) {
	m, err := ParseMeasured("m.json", []byte(`{"a": {"runs": {"w": {"wall_s_per_iter": 1}}}, "b": {"runs": {"w": {"wall_s_per_iter": 2}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Lookup("w", 0, 1); err == nil || !strings.Contains(err.Error(), "several machines: a, b") {
		t.Errorf("err = %v", err)
	}
}

// FuzzParseMeasured: any input parses or fails with an error naming the
// file, and never panics; what parses has a wall time for every run.
func FuzzParseMeasured(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("testdata", "measured.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"m": {"runs": {"w": {"wall_s_per_iter": 0.1}}}}`))
	f.Add([]byte(`{"tp": {"rank0": {"rank": 0, "world": 2, "runs": {"w": {"wall_s_per_iter": "slow"}}}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMeasured("fuzz.json", data)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.json") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		for _, r := range m.Runs {
			if r.Machine == "" || r.Workload == "" {
				t.Errorf("run without machine or workload: %+v", r)
			}
		}
	})
}

// A run kreplay capture measured has its idle power and extra fields
// (event time, window, ticks), which are kept or passed over.
func TestParseMeasuredCapture(t *testing.T) {
	m, err := ParseMeasured("m.json", []byte(`{"h100-80gb-hbm3": {"gpu": "NVIDIA H100 80GB HBM3", "torch": "2.11.0", "runs": {"w": {"iters": 130,
		"wall_s_per_iter": 0.0161, "event_ms_per_iter": 16.1, "energy_j_per_iter": 7.4, "window_s": 2.01, "idle_w": 71.5, "ticks": 20, "inside": 124.6,
		"median_ms_per_process": [16.2, 15.0, 16.1]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.Lookup("w", 0, 1)
	if err != nil || r.IdleW != 71.5 || r.Iters != 130 || r.WallS != 0.0161 || r.EnergyJ != 7.4 || r.GPU != "NVIDIA H100 80GB HBM3" {
		t.Errorf("%+v, %v", r, err)
	}
	if sp := r.ProcessSpread(); math.Abs(sp-(16.2/15.0-1)) > 1e-12 || len(r.ProcessesMS) != 3 {
		t.Errorf("processes %v: spread %g, want 8%%", r.ProcessesMS, sp)
	}
}
