package workload

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/runner"
)

// A bundle's Ranks: each rank's trace in Traces' order, its schedules
// among Schedules, its kernels directory (missing: a warning); anything
// else is an error naming the rank.
func TestBundleRanks(t *testing.T) {
	rank := func(r int, trace string, scheds ...string) RankFiles {
		return RankFiles{Rank: r, Device: r + 4, Trace: trace, Schedules: scheds}
	}
	// The embedded trace stands for rank 0's and rank 1's.
	traces := []string{"trace.json.gz", "rank1.trace.json.gz"}
	for _, tc := range []struct {
		name    string
		version int
		ranks   []RankFiles
		kernels string
		want    string // "" reads
	}{
		{"good", 2, []RankFiles{rank(0, traces[0], "spec.json"), rank(1, traces[1])}, "", ""},
		{"version 1", 1, []RankFiles{rank(0, traces[0]), rank(1, traces[1])}, "", "version 1: ranks are version 2's"},
		{"too few", 2, []RankFiles{rank(0, traces[0])}, "", "ranks: 1 ranks but 2 traces"},
		{"out of order", 2, []RankFiles{rank(1, traces[0]), rank(0, traces[1])}, "", "ranks[0]: rank 1, want 0 (rank order)"},
		{"other trace", 2, []RankFiles{rank(0, traces[1]), rank(1, traces[1])}, "", `ranks[0]: trace "rank1.trace.json.gz", but traces[0] is "trace.json.gz"`},
		{"schedule not listed", 2, []RankFiles{rank(0, traces[0]), rank(1, traces[1], "env.json")}, "", `ranks[1]: schedule "env.json" is not in schedules`},
		{"kernels beside ranks", 2, []RankFiles{rank(0, traces[0]), rank(1, traces[1])}, "kernels", `kernels "kernels" beside ranks`},
		{"kernels not a dir", 2, []RankFiles{rank(0, traces[0]), {Rank: 1, Trace: traces[1], Kernels: "env.json"}}, "", `ranks[1]: kernels "env.json" is not a directory`},
		{"kernels escaping", 2, []RankFiles{{Rank: 0, Trace: traces[0], Kernels: "../k"}, rank(1, traces[1])}, "", `ranks[0]: kernels "../k" is not a directory name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Manifest{Version: tc.version, Workload: "bloom-560m_prefill", Spec: "spec.json", Traces: traces, Measured: "measured.json",
				Env: "env.json", Created: "2026-11-28T00:00:00Z", Kreplay: "test", Ranks: tc.ranks, Kernels: tc.kernels}
			if tc.version >= 2 {
				m.Schedules = []string{"spec.json"}
			}
			js, _ := json.Marshal(m)
			dir := writeBundle(t, string(js))
			data, _ := os.ReadFile(filepath.Join(dir, "trace.json.gz"))
			os.WriteFile(filepath.Join(dir, "rank1.trace.json.gz"), data, 0o644)
			b, err := ReadBundle(dir)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(b.Manifest.Ranks) != 2 || b.Manifest.Ranks[1].Device != 5 {
				t.Errorf("ranks %+v", b.Manifest.Ranks)
			}
		})
	}
}

// A rank's missing kernels directory is a warning, and its trace imports
// as a plain one; a rank's kernels that are there are its trace's.
func TestBundleRankKernels(t *testing.T) {
	traces := []string{"trace.json.gz", "rank1.trace.json.gz"}
	m := Manifest{Version: 2, Workload: "bloom-560m_prefill", Spec: "spec.json", Traces: traces, Measured: "measured.json",
		Env: "env.json", Created: "2026-11-28T00:00:00Z", Kreplay: "test",
		Ranks: []RankFiles{{Rank: 0, Trace: traces[0], Kernels: "kernels/rank0"}, {Rank: 1, Trace: traces[1], Kernels: "kernels/rank1"}}}
	js, _ := json.Marshal(m)
	dir := writeBundle(t, string(js))
	data, _ := os.ReadFile(filepath.Join(dir, "trace.json.gz"))
	os.WriteFile(filepath.Join(dir, "rank1.trace.json.gz"), data, 0o644)
	os.MkdirAll(filepath.Join(dir, "kernels", "rank0"), 0o755)
	os.WriteFile(filepath.Join(dir, "kernels", "rank0", "index.json"), []byte(`not an index`), 0o644)
	b, err := ReadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0], `kernels directory "kernels/rank1" is missing`) {
		t.Errorf("warnings %q", b.Warnings)
	}
	if _, err := b.ImportTrace(traces[1]); err != nil {
		t.Errorf("rank 1 without kernels: %v", err)
	}
	// Rank 0's kernels are read with its trace: here a bad index, an error.
	if _, err := b.ImportTrace(traces[0]); err == nil || !strings.Contains(err.Error(), "kernels") {
		t.Errorf("rank 0 with a bad kernels index: %v", err)
	}
}

// measured.json's per-rank form: one object per rank under the
// tensor-parallel machine's key, each with its own GPU's run, read back
// by rank.
func TestMeasuredFileRanks(t *testing.T) {
	infos := []*runner.Info{{GPU: "NVIDIA H200", Torch: "2.11", CUDA: "13.0", Driver: "580"}, {GPU: "NVIDIA H200", Torch: "2.11", CUDA: "13.0", Driver: "580"}}
	res := []*runner.Result{{Inferences: 20, WallSPerInference: 0.010, EnergyJPerInference: 5.5, IdleW: 80},
		{Inferences: 20, WallSPerInference: 0.011, EnergyJPerInference: 4.5, IdleW: 75}}
	f := measuredFileRanks("llama_prefill", []int{6, 7}, infos, res, [][]float64{{10, 11}, {12, 13}})
	js, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseMeasured("measured.json", js)
	if err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	for r, want := range []float64{5.5, 4.5} {
		run, err := m.Lookup("llama_prefill", r, 2)
		if err != nil {
			t.Fatal(err)
		}
		if run.Machine != "2xh200_tp2" || run.EnergyJ != want || run.WallS != res[r].WallSPerInference || run.IdleW != res[r].IdleW || run.GPU != "NVIDIA H200" {
			t.Errorf("rank %d: %+v", r, run)
		}
	}
	if !strings.Contains(string(js), `"rank1":{"rank":1,"world":2,"device":7,"gpu":"NVIDIA H200"`) || !strings.Contains(string(js), `"median_ms_per_process":[12,13]`) {
		t.Errorf("measured.json %s", js)
	}
}
