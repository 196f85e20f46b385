package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// A bad -measured file stops the run before any GPU is opened, with an
// error naming the file and the field.
func TestRunMeasuredErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "m.json")
	os.WriteFile(bad, []byte(`{"tp": {"rank0": {"rank": 0, "world": 2, "runs": {"w": {"wall_s_per_iter": "slow"}}}}}`), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-measured", bad}, bad + `: tp.rank0.runs.w.wall_s_per_iter: want a number, got "slow"`},
		{[]string{"run", "-measured", filepath.Join(dir, "none.json")}, "none.json: no such file"},
	} {
		code, _, e := runCmd(t, tc.args...)
		if code != 1 || !strings.Contains(e, tc.want) {
			t.Errorf("kreplay %v: exit %d, stderr %q; want exit 1 and %q", tc.args, code, e, tc.want)
		}
	}
}

func TestCompareMeasured(t *testing.T) {
	m, err := replay.ParseMeasured("m.json", []byte(`{"tp": {
		"rank0": {"rank": 0, "world": 2, "runs": {"w": {"wall_s_per_iter": 0.1, "energy_j_per_iter": 30}}},
		"rank1": {"rank": 1, "world": 2, "runs": {"w": {"wall_s_per_iter": 0.1, "energy_j_per_iter": 32}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	set := func(workload string, rank int) *signatures.Set {
		return &signatures.Set{Source: signatures.Source{Workload: workload, Rank: rank, WorldSize: 2}}
	}
	tests := []struct {
		name      string
		sets      []*signatures.Set
		idle      []deviceIdle
		wantIdleJ []float64
		wantWarn  []string
	}{
		{"both", []*signatures.Set{set("w", 0), set("w", 1)}, []deviceIdle{{Watts: 100}, {Device: 1, Watts: 50}}, []float64{6, 3}, nil},
		{"no idle power", []*signatures.Set{set("w", 0), set("w", 1)}, nil, []float64{0, 0}, nil},
		{"one idle failed", []*signatures.Set{set("w", 0), set("w", 1)}, []deviceIdle{{Watts: 100}, {Device: 1, Err: "x"}}, []float64{6, 0},
			[]string{"rank 1: no idle power measured"}},
		{"unknown workload", []*signatures.Set{set("w", 0), set("v", 1)}, nil, []float64{0, 0}, []string{`m.json: no run of workload "v" on rank 1 of 2`}},
	}
	for _, tt := range tests {
		ranks := []replay.RankPrediction{{Rank: 0, ComputeNS: 40e6, BusyJ: 20}, {Rank: 1, ComputeNS: 40e6, BusyJ: 21}}
		warn := compareMeasured(ranks, tt.sets, m, tt.idle)
		if len(warn) != len(tt.wantWarn) {
			t.Errorf("%s: warnings %q, want %q", tt.name, warn, tt.wantWarn)
		}
		for i, w := range tt.wantWarn {
			if i < len(warn) && !strings.Contains(warn[i], w) {
				t.Errorf("%s: warning %q, want %q", tt.name, warn[i], w)
			}
		}
		for i, p := range ranks {
			if d := p.IdleJ - tt.wantIdleJ[i]; d > 1e-9 || d < -1e-9 {
				t.Errorf("%s: rank %d idle %.3f J, want %.3f", tt.name, i, p.IdleJ, tt.wantIdleJ[i])
			}
		}
	}
}

// -roofline turns the clock probe on, so that the hardware roof is taken
// at the SM clock measured on the GPU; without it nothing is probed.
func TestRunRooflineProbesClock(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want bool
	}{{[]string{"-roofline"}, true}, {nil, false}} {
		f, _, err := parseRunFlags(tt.args, &strings.Builder{})
		if err != nil {
			t.Fatal(err)
		}
		if f.measure.ClockProbe != tt.want {
			t.Errorf("%q: ClockProbe %v, want %v", tt.args, f.measure.ClockProbe, tt.want)
		}
	}
}

// -roofline places signatures on one GPU's peaks: with several devices it
// stops before any GPU is opened, saying so.
func TestRunRooflineOneDevice(t *testing.T) {
	code, _, e := runCmd(t, "run", "-roofline", "-devices", "0,1")
	if code != 1 || !strings.Contains(e, "-roofline: one device at a time (-devices 0,1)") {
		t.Errorf("exit %d, stderr %q", code, e)
	}
}
